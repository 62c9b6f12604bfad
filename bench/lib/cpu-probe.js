/* global process */
// Preloaded (`node -r bench/lib/cpu-probe.js …`) into every process a section loads, the plain
// JavaScript floor included: answers the driver's IPC message 'cpu' with the CPU time the process
// has used so far (µs, user + system, all its threads). Nothing runs per request: no timer, no
// route, no inspector in the measured process.
if (process.send !== undefined) {
  process.on('message', (message) => {
    if (message !== 'cpu') return;
    const { user, system } = process.cpuUsage();
    process.send({ cpuUs: user + system });
  });
  // The IPC channel must not keep a process alive that its server no longer holds.
  if (process.channel) process.channel.unref();
}
