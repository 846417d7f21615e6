#!/usr/bin/env node
// cdk-nag's AWS Solutions rule pack over synthesized templates of the tix stack:
//
//   node scripts/cdknag.js tix-dev.template.json [tix-prod.template.json ...]
//   node scripts/cdknag.js --all ...   also reports the acknowledged findings
//
// Each template is included as it is (cloudformation-include), the rules run as
// an aspect, and every error or warning that is not acknowledged below fails
// the run (exit 1). make test runs it from infra/stack_test.go over the dev and
// prod templates that the infra tests synthesize.
'use strict';

// Only cdk-nag's rules here: aws-cdk-lib's own CloudFormation validation (a
// WebAssembly rule engine, run at every synth) takes most of the time and
// judges nothing cdk-nag is asked for.
process.env.CDK_VALIDATION = 'false';

const fs = require('fs');
const os = require('os');
const path = require('path');
const { App, Aspects, DefaultStackSynthesizer, Stack } = require('aws-cdk-lib');
const { CfnInclude } = require('aws-cdk-lib/cloudformation-include');
const { AwsSolutionsChecks, NagSuppressions } = require('cdk-nag');

// Findings that are deliberate, each with the reason. A rule listed here is
// acknowledged for the whole template: keep the reasons true when the stack
// changes. Everything else is fixed in infra/ (TLS-only queue and topic
// policies, API access logs, per-function roles naming each index).
const acknowledged = [
  {
    id: 'AwsSolutions-APIG4',
    reason:
      'The API authenticates its own keys (sk_/pk_ API keys hashed in DynamoDB, with scopes, origins, IP allow-lists and per-key budgets) in the functions; ' +
      '/health and /openapi.json are public by contract; POST /payment-notifications/tbank is the bank\'s, authenticated by the Token it signs ' +
      'with the terminal\'s password (checked in the orders function). An API Gateway authorizer would add a second, weaker copy of that check.',
  },
  {
    id: 'AwsSolutions-SMG4',
    reason:
      'No automatic rotation on purpose. The cursor secret signs pagination cursors and derives order poll tokens: rotating it invalidates every ' +
      'outstanding cursor and poll token. The webhook keyring rotates by adding a key (docs/aws.md, Rolling back) because ' +
      'replacing it would make every stored webhook secret unreadable; that is a documented manual procedure, not a Lambda rotation.',
  },
];

function check(file, acknowledge) {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'tix-cdknag-'));
  const app = new App({ outdir });
  // The included template brings its own BootstrapVersion parameter and rule.
  const stack = new Stack(app, path.basename(file, '.json').replace(/[^A-Za-z0-9-]/g, '-'), {
    synthesizer: new DefaultStackSynthesizer({ generateBootstrapVersionRule: false }),
  });
  new CfnInclude(stack, 'Template', { templateFile: file });
  if (acknowledge) NagSuppressions.addStackSuppressions(stack, acknowledged, true);
  Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true, reports: false }));
  const asm = app.synth();
  const findings = [];
  for (const artifact of asm.stacks) {
    for (const m of artifact.messages) {
      if (m.level === 'error' || m.level === 'warning') {
        const text = String(m.entry.data);
        const rule = (text.match(/AwsSolutions-[A-Za-z0-9]+/) || ['?'])[0];
        findings.push({ rule, level: m.level, path: m.id, text });
      }
    }
  }
  fs.rmSync(outdir, { recursive: true, force: true });
  return findings;
}

function main() {
  const all = process.argv.includes('--all');
  const files = process.argv.slice(2).filter((a) => a !== '--all');
  if (files.length === 0) {
    console.error('usage: node scripts/cdknag.js <template.json>...');
    process.exit(2);
  }
  let failed = 0;
  for (const file of files) {
    const findings = check(file, !all);
    const byRule = {};
    for (const f of findings) byRule[f.rule] = (byRule[f.rule] || 0) + 1;
    const summary = Object.keys(byRule).sort().map((r) => `${r} x${byRule[r]}`).join(', ');
    const acked = all ? '' : ` (acknowledged with a reason: ${acknowledged.map((a) => a.id).join(', ')})`;
    console.log(`cdk-nag AwsSolutions ${path.basename(file)}: ${findings.length} ${all ? '' : 'unacknowledged '}finding(s)${summary ? ': ' + summary : ''}${acked}`);
    for (const f of findings) console.log(`  ${f.level} ${f.path}: ${f.text.split('\n')[0]}`);
    failed += findings.length;
  }
  process.exit(failed > 0 ? 1 : 0);
}

main();
