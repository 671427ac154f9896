// An S3-compatible server for dynindex's tests (test/t/110_export_*.pl).
//
// s3rver (npm) stores the objects and speaks S3's REST API (PUT, multipart
// upload, GET with ranges, ListObjectsV2, errors), but does not check
// Signature Version 4.  This proxy in front of it does, as strictly as S3:
// it rebuilds each request's canonical request from what arrived (the path
// and every query name and value decoded, then URI-encoded again as the
// specification says: RFC 3986 unreserved characters kept, upper-case hex,
// '/' kept in the path only, a '+' of the query a space; query parameters
// sorted by name then value, "name=" for one without value; the signed
// headers sorted, their values trimmed, repeated ones joined with ','), so a
// client that signs anything but the canonical form fails as it would at S3.
// It checks the credential scope (service s3, the region, the date of
// X-Amz-Date, at most 15 minutes off), the signature with the signing key of
// the secret, and the payload's SHA-256 against x-amz-content-sha256, answers
// S3's errors (InvalidAccessKeyId, SignatureDoesNotMatch,
// AuthorizationHeaderMalformed, RequestTimeTooSkewed, InvalidURI,
// XAmzContentSHA256Mismatch) as S3 does, and then forwards the request to
// s3rver.  Test knobs (not S3): --max-keys N caps the listing page size
// (paging with few objects); GET /__test/fault?mode=drop-uploads makes every
// later upload lose its connection after receiving its body,
// mode=slow-uploads delays every upload by 1.5 s, mode=none restores.
//
// Usage: node server.js --port P --dir D --access-key K --secret S [--region R (us-east-1)]
//        [--bucket B ...] [--max-keys N]
//        [--log FILE: one line per request, "METHOD URL BODYBYTES ok|<S3 error code>", then
//         " sse=<x-amz-server-side-encryption> kms=<its KMS key id>" when sent]
//        [--debug: print each canonical request on stderr]
// Prints "READY <port>" when listening.
'use strict';
const crypto = require('crypto');
const fs = require('fs');
const http = require('http');
const S3rver = require('s3rver');

const args = process.argv.slice(2);
const opt = { port: 0, dir: null, key: null, secret: null, region: 'us-east-1', buckets: [], maxKeys: 0, log: null, debug: false };
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  const v = args[i + 1];
  if (a === '--port') { opt.port = Number(v); i++; }
  else if (a === '--dir') { opt.dir = v; i++; }
  else if (a === '--access-key') { opt.key = v; i++; }
  else if (a === '--secret') { opt.secret = v; i++; }
  else if (a === '--region') { opt.region = v; i++; }
  else if (a === '--debug') { opt.debug = true; }
  else if (a === '--bucket') { opt.buckets.push(v); i++; }
  else if (a === '--max-keys') { opt.maxKeys = Number(v); i++; }
  else if (a === '--log') { opt.log = v; i++; }
  else { console.error(`unknown argument ${a}`); process.exit(2); }
}
if (!opt.dir || !opt.key || !opt.secret) {
  console.error('usage: server.js --port P --dir D --access-key K --secret S [--bucket B] [--max-keys N]');
  process.exit(2);
}
let fault = 'none';

function xmlError(res, status, code, message) {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;
  res.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

// AWS's URI encoding (RFC 3986 unreserved characters kept)
function uriEncode(s, keepSlash) {
  let out = '';
  for (const b of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c) || (keepSlash && c === '/')) out += c;
    else out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

// Percent-decoding; null for a malformed escape (S3: InvalidURI).
function decode(s) {
  try {
    return decodeURIComponent(s);
  } catch (e) {
    return null;
  }
}

// The canonical query string of what arrived; null when it cannot be decoded.
function canonicalQuery(q) {
  if (!q) return '';
  const pairs = [];
  for (const p of q.split('&')) {
    if (p.length === 0) continue;
    const i = p.indexOf('=');
    // in a query a '+' is a space, as S3 reads it
    const k = decode((i < 0 ? p : p.slice(0, i)).replace(/\+/g, '%20'));
    const v = decode((i < 0 ? '' : p.slice(i + 1)).replace(/\+/g, '%20'));
    if (k === null || v === null) return null;
    pairs.push([uriEncode(k, false), uriEncode(v, false)]);
  }
  pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  return pairs.map(([k, v]) => `${k}=${v}`).join('&');
}

// A header's canonical value: every occurrence trimmed, inner runs of blanks one space, joined with ','.
function headerValue(req, name) {
  const vals = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i].toLowerCase() === name) vals.push(req.rawHeaders[i + 1].trim().replace(/[ \t]+/g, ' '));
  }
  return vals.join(',');
}

const hmac = (key, data) => crypto.createHmac('sha256', key).update(data).digest();
const sha256hex = (data) => crypto.createHash('sha256').update(data).digest('hex');

// Verify a request's SigV4 header signature; returns null or [status, code, message].
function verify(req, body) {
  const auth = req.headers.authorization || '';
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(auth);
  if (!m) return [403, 'AccessDenied', 'Access Denied'];
  const [, keyId, date, region, service, signedHeaders, signature] = m;
  if (keyId !== opt.key) return [403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'];
  const amzDate = req.headers['x-amz-date'];
  const payloadHash = req.headers['x-amz-content-sha256'];
  if (!amzDate || !payloadHash) return [400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256'];
  if (service !== 's3') return [400, 'AuthorizationHeaderMalformed', `The authorization header is malformed; incorrect service "${service}". This endpoint belongs to "s3".`];
  if (region !== opt.region) return [400, 'AuthorizationHeaderMalformed', `The authorization header is malformed; the region '${region}' is wrong; expecting '${opt.region}'`];
  const dm = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  if (!dm) return [403, 'AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header'];
  if (amzDate.slice(0, 8) !== date) return [400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed; Invalid credential date. Date is not the same as X-Amz-Date.'];
  const when = Date.UTC(+dm[1], +dm[2] - 1, +dm[3], +dm[4], +dm[5], +dm[6]);
  if (Math.abs(Date.now() - when) > 15 * 60 * 1000) return [403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.'];
  const url = req.url;
  const qi = url.indexOf('?');
  const rawPath = qi < 0 ? url : url.slice(0, qi);
  const path = decode(rawPath);
  const query = canonicalQuery(qi < 0 ? '' : url.slice(qi + 1));
  if (path === null || query === null) return [400, 'InvalidURI', "Couldn't parse the specified URI."];
  const names = signedHeaders.split(';');
  if (!names.includes('host') || !names.includes('x-amz-content-sha256')) return [403, 'AccessDenied', 'Access Denied'];
  // S3 requires every x-amz-* header to be signed
  if (Object.keys(req.headers).some((h) => h.startsWith('x-amz-') && !names.includes(h)))
    return [403, 'AccessDenied', 'There were headers present in the request which were not signed'];
  // the canonical request names the signed headers sorted: a list in another order does not match
  const sorted = [...names].sort();
  const canonHeaders = sorted.map((n) => `${n}:${headerValue(req, n)}\n`).join('');
  const canonical = [req.method, uriEncode(path, true), query, canonHeaders, sorted.join(';'), payloadHash].join('\n');
  if (opt.debug) console.error(`canonical request:\n${canonical}\n`);
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256hex(canonical)].join('\n');
  let k = hmac('AWS4' + opt.secret, date);
  k = hmac(k, region);
  k = hmac(k, service);
  k = hmac(k, 'aws4_request');
  const expected = hmac(k, toSign).toString('hex');
  if (expected !== signature) {
    return [403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.'];
  }
  if (payloadHash !== 'UNSIGNED-PAYLOAD' && payloadHash !== sha256hex(body)) {
    return [400, 'XAmzContentSHA256Mismatch', "The provided 'x-amz-content-sha256' header does not match what was computed."];
  }
  return null;
}

async function main() {
  const backend = new S3rver({
    port: 0, address: '127.0.0.1', silent: true, directory: opt.dir,
    configureBuckets: opt.buckets.map((name) => ({ name, configs: [] })),
  });
  const { port: backendPort } = await backend.run();

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (req.url.startsWith('/__test/fault')) {
        fault = new URL(req.url, 'http://x').searchParams.get('mode') || 'none';
        res.end(`fault ${fault}\n`);
        return;
      }
      const err = verify(req, body);
      const sse = req.headers['x-amz-server-side-encryption'];
      const kms = req.headers['x-amz-server-side-encryption-aws-kms-key-id'];
      if (opt.log) fs.appendFileSync(opt.log, `${req.method} ${req.url} ${body.length} ${err ? err[1] : 'ok'}` +
        (sse ? ` sse=${sse}` : '') + (kms ? ` kms=${kms}` : '') + '\n');
      if (err) {
        xmlError(res, err[0], err[1], err[2]);
        return;
      }
      if (fault === 'drop-uploads' && req.method === 'PUT') {
        req.socket.destroy();     // the connection is lost mid-transfer
        return;
      }
      if (fault === 'slow-uploads' && req.method === 'PUT' && !req.url.includes('_started')) {
        setTimeout(() => forward(req, res, body), 1500);
        return;
      }
      forward(req, res, body);
    });
  });

  function forward(req, res, body) {
    let url = req.url;
      if (opt.maxKeys > 0 && req.method === 'GET' && /[?&]list-type=2(&|$)/.test(url)) {
        url += `&max-keys=${opt.maxKeys}`;
      }
      const headers = { ...req.headers };
      delete headers.authorization;
      headers.host = `127.0.0.1:${backendPort}`;
      headers['content-length'] = String(body.length);
      const fwd = http.request({ host: '127.0.0.1', port: backendPort, method: req.method, path: url, headers }, (r) => {
        res.writeHead(r.statusCode, r.headers);
        r.pipe(res);
      });
      fwd.on('error', () => xmlError(res, 500, 'InternalError', 'We encountered an internal error. Please try again.'));
      fwd.end(body);
  }
  server.listen(opt.port, '127.0.0.1', () => {
    console.log(`READY ${server.address().port}`);
  });
}

main().catch((e) => { console.error(e); process.exit(1); });
