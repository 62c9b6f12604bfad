// Proves the `express4` Jest project really runs on Express 4: the flows it shares with the
// integration project (callback, middleware, example app) then cover both major versions.
import express from 'express';
import expressPackage from 'express/package.json';

test('this project resolves `express` to Express 4', () => {
  expect(expressPackage.version).toMatch(/^4\./);
  expect(typeof express.Router).toBe('function');
});
