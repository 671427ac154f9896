// bench/throttle-load.mjs URL OP SECONDS CLIENTS: CLIENTS keep-alive connections
// sending OP (GetItem or PutItem) to the DynamoDB endpoint at URL back to back for
// SECONDS; prints "<ops/s> <errors>" (bench/throttle.sh runs it).
import http from 'node:http';

const [url, op, seconds, clients] = [process.argv[2], process.argv[3], Number(process.argv[4]), Number(process.argv[5])];
const u = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
let done = 0;
let errors = 0;
const end = Date.now() + seconds * 1000;

function body(i) {
  const k = { pk: { S: 'k' + (i % 1000) } };
  return JSON.stringify(op === 'GetItem' ? { TableName: 'BenchThr', Key: k }
    : { TableName: 'BenchThr', Item: { ...k, v: { S: 'x'.repeat(100) } } });
}

function one(i) {
  return new Promise((resolve) => {
    const data = body(i);
    const req = http.request({ host: u.hostname, port: u.port, path: '/', method: 'POST', agent,
      headers: { 'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'DynamoDB_20120810.' + op,
        'Content-Length': Buffer.byteLength(data) } }, (res) => {
      res.resume();
      res.on('end', () => { if (res.statusCode === 200) done++; else errors++; resolve(); });
    });
    req.on('error', () => { errors++; resolve(); });
    req.end(data);
  });
}

async function loop(c) {
  let i = c * 100003;
  while (Date.now() < end) await one(i++);
}

const start = Date.now();
await Promise.all(Array.from({ length: clients }, (_, c) => loop(c)));
console.log(`${Math.round(done / ((Date.now() - start) / 1000))} ${errors}`);
agent.destroy();
