// The simulator's Express app: the token endpoint, the open-API stand-in, the lobby, and JSON
// answers for everything else.
import express, { type ErrorRequestHandler, type Express } from 'express';
import { enterGame, lobbyPage } from './lobby';
import { sendJson } from './write-response';
import { tokenEndpoint, type TokenEndpointContext } from './token-endpoint';
import { userinfoEndpoint } from './userinfo';

/** Builds the app around one simulator's state and faults. */
export function createSimulatorApp(context: TokenEndpointContext): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // The same flat, string-only query parsing under Express 4 and 5 (no `a[b]=` objects).
  app.set('query parser', 'simple');

  app.post('/token', ...tokenEndpoint(context));
  app.all('/token', (_req, res) => {
    sendJson(
      res,
      405,
      { error: 'invalid_request', error_description: 'use POST' },
      { Allow: 'POST' },
    );
  });
  app.get('/userinfo', userinfoEndpoint(context.state));
  app.get('/', lobbyPage(context.state));
  app.get('/enter', enterGame(context.state));
  app.use((_req, res) => {
    sendJson(res, 404, { error: 'not_found' });
  });
  // Never Express's default page: it would print a stack trace in development.
  const serverError: ErrorRequestHandler = (_error, _req, res, _next) => {
    sendJson(res, 500, { error: 'server_error' });
  };
  app.use(serverError);
  return app;
}
