// The ceiling: a node:http server that answers every request with one fixed small JSON body,
// so a run against it measures only the client, the loopback and node:http on this machine.
// Run as a child process by servers.ts; prints its port once listening.
import http from 'node:http';

const body = Buffer.from(
  '{"odata.metadata":"http://127.0.0.1/devstoreaccount1/$metadata#bench/@Element",' +
    '"PartitionKey":"p","RowKey":"r","Value":1}',
);

const server = http.createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, {
      'content-type': 'application/json;odata=minimalmetadata;streaming=true;charset=utf-8',
      'content-length': body.length,
    });
    response.end(body);
  });
});
server.keepAliveTimeout = 5_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  console.log(`bare server listening on http://127.0.0.1:${address.port}/devstoreaccount1`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
