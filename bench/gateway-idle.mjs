// Hold N idle keep-alive connections to the gateway (bench/gateway.sh scale):
// each connects, makes one request (GET /, the health check) and then stays
// open and silent, as the idle sockets of many SDK connection pools do.
//
//   node bench/gateway-idle.mjs --endpoint http://127.0.0.1:8091 --n 10000
//
// Prints "ready <open> <failed>" once all are open; on SIGTERM prints one line
// of JSON: how many are still open, how many the server closed (FIN) and how
// many were reset or failed, then exits.
import net from 'node:net';
import { parseArgs } from './gateway-lib.mjs';

const opt = parseArgs(process.argv.slice(2), { endpoint: 'http://127.0.0.1:8091', n: 10000, batch: 200 });
const u = new URL(opt.endpoint);
const stats = { open: 0, served: 0, closedByServer: 0, errors: 0, firstError: null };

function one() {
  return new Promise((resolve) => {
    const s = net.connect({ host: u.hostname, port: Number(u.port) });
    let buf = '';
    let done = false;
    const finish = (ok) => { if (!done) { done = true; resolve(ok); } };
    s.setNoDelay(true);
    s.on('connect', () => s.write(`GET / HTTP/1.1\r\nHost: ${u.host}\r\n\r\n`));
    s.on('data', (d) => {
      buf += d;
      if (!done && buf.includes('\r\n\r\n') && buf.endsWith('amazonaws.com ')) {
        stats.served++;
        stats.open++;
        finish(true);
      }
    });
    s.on('end', () => { if (done) { stats.open--; stats.closedByServer++; } else finish(false); });
    s.on('error', (e) => {
      if (done) stats.open--;
      stats.errors++;
      stats.firstError ??= e.code || e.message;
      finish(false);
    });
  });
}

for (let i = 0; i < opt.n; i += opt.batch) {
  await Promise.all(Array.from({ length: Math.min(opt.batch, opt.n - i) }, one));
}
console.log(`ready ${stats.open} ${opt.n - stats.served}`);
process.on('SIGTERM', () => {
  console.log(JSON.stringify(stats));
  process.exit(0);
});
setInterval(() => {}, 1 << 30);
