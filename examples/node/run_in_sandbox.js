#!/usr/bin/env node
// Runs one command in a ccsandbox session: a minimal client of ccsandbox.v1.SandboxBroker.
//
//   run_in_sandbox.js [--broker=ADDRESS] [--proto=FILE] WORKDIR -- COMMAND [ARGS...]
//
// Probes the broker, launches a session that binds WORKDIR read-write (the command starts there),
// runs COMMAND in it streaming its stdout, stderr and violations, and destroys the session however
// the run ends. Exits with the command's exit code, 128+signal when it was killed, 125 when the
// broker refused or failed.
//
// The broker's address: --broker, else $CCSANDBOX_BROKER, else the installed service's socket.
// The API is loaded at run time from proto/sandbox.proto (@grpc/proto-loader); `npm ci` here
// installs the two dependencies.
'use strict';

const crypto = require('node:crypto');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const DEFAULT_BROKER = 'unix:/run/ccsandbox-broker/broker.sock';
const DEFAULT_PROTO = path.join(__dirname, '..', '..', 'proto', 'sandbox.proto');
const USAGE = 'usage: run_in_sandbox.js [--broker=ADDRESS] [--proto=FILE] WORKDIR -- COMMAND [ARGS...]';

function parseArgs(args) {
  const options = {
    broker: process.env.CCSANDBOX_BROKER || DEFAULT_BROKER,
    proto: DEFAULT_PROTO,
  };
  const dashes = args.indexOf('--');
  const before = dashes < 0 ? args : args.slice(0, dashes);
  const command = dashes < 0 ? [] : args.slice(dashes + 1);
  const positional = [];
  for (const arg of before) {
    const flag = /^--(broker|proto)=(.*)$/.exec(arg);
    if (flag) options[flag[1]] = flag[2];
    else if (arg.startsWith('-')) throw new Error(`unknown flag ${arg}`);
    else positional.push(arg);
  }
  if (positional.length !== 1 || command.length === 0) throw new Error('WORKDIR and a command');
  options.workdir = path.resolve(positional[0]);  // the broker refuses relative paths
  options.command = command;
  if (!options.broker.includes(':')) options.broker = `unix:${options.broker}`;
  return options;
}

// A line of this client's own, on stderr, apart from the command's output.
function note(text) {
  process.stderr.write(`run_in_sandbox: ${text}\n`);
}

// The broker's stub: the service from the .proto, proto3 JSON names (sessionId), enums as names.
function brokerStub(proto, address) {
  const definition = protoLoader.loadSync(proto, {
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,  // event.event names the member of the `event` oneof that is set
  });
  const api = grpc.loadPackageDefinition(definition).ccsandbox.v1;
  return new api.SandboxBroker(address, grpc.credentials.createInsecure());
}

// A unary call as a promise, with a deadline in seconds.
function call(stub, method, request, seconds) {
  const deadline = new Date(Date.now() + seconds * 1000);
  return new Promise((resolve, reject) => {
    stub[method](request, {deadline}, (err, response) => (err ? reject(err) : resolve(response)));
  });
}

// Probe, Launch, Exec, Destroy; resolves to the exit code to leave with.
async function run(stub, workdir, argv) {
  const probe = await call(stub, 'Probe', {}, 30);
  note(probe.statusLine);

  const spec = {
    sessionId: `example-${crypto.randomBytes(6).toString('hex')}`,
    bindMounts: [{hostPath: workdir, guestPath: workdir}],
    guestWorkdir: workdir,
  };
  const handle = await call(stub, 'Launch', {spec}, 60);
  note(`session ${handle.sessionId} on ${handle.backend}, ${handle.state}`);
  const sessionId = handle.sessionId;
  try {
    let code = 125;  // the stream ended without saying how the command ended
    const events = stub.Exec({sessionId, argv});
    // Ctrl-C cancels the call: the broker then kills the run, and the session is destroyed below.
    process.once('SIGINT', () => events.cancel());
    for await (const event of events) {
      switch (event.event) {
        case 'stdout':
          process.stdout.write(event.stdout);
          break;
        case 'stderr':
          process.stderr.write(event.stderr);
          break;
        case 'violation':
          note(`violation ${event.violation.action} ${event.violation.target}`);
          break;
        case 'exit':
          code = event.exit.exitCode;
          note(`exit ${code}`);
          break;
        case 'killed':
          code = 128 + event.killed.signal;
          note(`killed (${event.killed.reason}): ${event.killed.detail}`);
          break;
        case 'error':
          note(`error ${event.error.code}: ${event.error.message}`);
          break;
      }
    }
    return code;
  } finally {
    try {
      await call(stub, 'Destroy', {sessionId}, 30);
      note(`session ${sessionId} destroyed`);
    } catch (err) {
      note(`Destroy: ${grpc.status[err.code]}: ${err.details}`);
    }
  }
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    return 125;
  }
  const stub = brokerStub(options.proto, options.broker);
  try {
    return await run(stub, options.workdir, options.command);
  } catch (err) {
    if (err.code === grpc.status.CANCELLED) return 130;
    note(`${grpc.status[err.code] ?? 'ERROR'}: ${err.details ?? err.message}`);
    return 125;
  } finally {
    stub.close();
  }
}

// Waits for stdout to drain before exiting with the command's code.
main().then((code) => {
  process.exitCode = code;
});
