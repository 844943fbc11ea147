#!/usr/bin/env node
// The JavaScript κ engine as a fixture command: the same protocol as `graphonomous topology -`.
//
//   node graphonomous/ui/topology-cli.mjs [FILE|-]      one {"nodes","edges"[,"preview"]} document in,
//                                                       canonical JSON out (2-space indent, as Python)
//   node graphonomous/ui/topology-cli.mjs --batch       JSON Lines in, one compact canonical line out
//                                                       per input line ({"error": …} for a bad one)
//
// Rules: no dependencies; the relationship table is static/relationships.json (exported from
// graphonomous.model); bad input → one line on stderr naming the field, exit 2.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ValidationError,
  analyzeDocument,
  canonicalJSON,
  setRelationshipTable,
  toCanonical,
} from './static/topology.js';

const EXIT_USAGE = 2;
const here = dirname(fileURLToPath(import.meta.url));
setRelationshipTable(JSON.parse(readFileSync(join(here, 'static', 'relationships.json'), 'utf8')));

function fail(message) {
  process.stderr.write(`topology-cli: ${message}\n`);
  process.exit(EXIT_USAGE);
}

function run(text) {
  let document;
  try {
    document = JSON.parse(text);
  } catch (err) {
    throw new ValidationError('document', `is not valid JSON (${err.message})`);
  }
  return toCanonical(analyzeDocument(document));
}

const args = process.argv.slice(2);
if (args.includes('--reference')) fail('--reference is not implemented by the JavaScript engine (canonical mode only)');
const batch = args.includes('--batch');
const files = args.filter((a) => a !== '--batch');
if (files.length > 1) fail('usage: topology-cli.mjs [FILE|-] [--batch]');
const path = files[0] ?? '-';
let input;
try {
  input = readFileSync(path === '-' ? 0 : path, 'utf8');
} catch (err) {
  fail(`cannot read ${path}: ${err.message}`);
}

if (batch) {
  const out = [];
  for (const line of input.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(canonicalJSON(run(line), null));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      out.push(JSON.stringify({ error: err.message }));
    }
  }
  process.stdout.write(out.length ? out.join('\n') + '\n' : '');
} else {
  try {
    process.stdout.write(canonicalJSON(run(input), 2) + '\n');
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    fail(`invalid ${err.field}: ${err.detail}`);
  }
}
