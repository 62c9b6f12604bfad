/* global process */
// Preloaded into every process a section loads: answers the driver's IPC message 'cpu' with the
// CPU time the process has used so far (µs, user + system); nothing runs per request.
if (process.send !== undefined) {
  process.on('message', (message) => {
    if (message !== 'cpu') return;
    const { user, system } = process.cpuUsage();
    process.send({ cpuUs: user + system });
  });
  // The IPC channel must not keep a process alive that its server no longer holds.
  if (process.channel) process.channel.unref();
}
