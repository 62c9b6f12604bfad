// The parts of socket.io's Socket and Namespace the adapter uses, typed structurally: the package
// does not import socket.io. Apart from the adapter and its recovery, which both use them.
import type { IncomingMessage } from 'node:http';

/** The part of a socket.io Socket the adapter uses. */
export interface SocketIoSocket {
  readonly request: IncomingMessage;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- socket.io's own type for it
  data: any;
  emit(event: string, ...args: unknown[]): unknown;
  disconnect(close?: boolean): unknown;
  once(event: 'disconnect', listener: () => void): unknown;
  /** False once the socket disconnected. */
  readonly connected?: boolean;
  /** True for a socket socket.io resumed (connection state recovery), its `data` restored. */
  readonly recovered?: boolean;
  /** The socket's namespace, whose `connection` event a resumed socket still fires. */
  readonly nsp?: SocketIoNamespace;
}

/** The part of a socket.io Namespace the adapter uses. */
export interface SocketIoNamespace {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- EventEmitter's own listener type
  prependListener(event: 'connection', listener: (...args: any[]) => void): unknown;
}
