import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** PEM texts made with the openssl command line: a server certificate, a client CA root and a client leaf. */
export interface OpensslCertificates {
  serverCert: string;
  serverKey: string;
  rootCert: string;
  clientCert: string;
  clientKey: string;
}

/**
 * Makes, in `dir`, what an operator makes with openssl for the recipe's mutual TLS: the server certificate
 * every instance presents (localhost, 127.0.0.1), and a client CA with one workload's certificate (clientAuth).
 */
export function opensslCertificates(dir: string): OpensslCertificates {
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'server.key',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=DNS:localhost,IP:127.0.0.1',
    '-addext',
    'extendedKeyUsage=serverAuth',
  );
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'root.key',
    '-out',
    'root.pem',
    '-days',
    '2',
    '-subj',
    '/O=Acme/CN=Deploy Root',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl('req', ...ec, '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/O=Acme/CN=worker-1');
  writeFileSync(join(dir, 'client.ext'), 'keyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'client.csr',
    '-CA',
    'root.pem',
    '-CAkey',
    'root.key',
    '-CAcreateserial',
    '-out',
    'client.pem',
    '-days',
    '1',
    '-extfile',
    'client.ext',
  );
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  return {
    serverCert: read('server.pem'),
    serverKey: read('server.key'),
    rootCert: read('root.pem'),
    clientCert: read('client.pem'),
    clientKey: read('client.key'),
  };
}
