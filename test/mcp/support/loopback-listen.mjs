// Preloaded into an HTTP MCP server (node --import): a listen() without a host binds 127.0.0.1
// instead of every interface, and the bound port is announced on stderr as "LISTENING <port>".
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  const isPort = typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first));
  if (isPort && typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  this.once('listening', () => process.stderr.write(`LISTENING ${this.address().port}\n`));
  return listen.apply(this, args);
};
