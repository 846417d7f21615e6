// Run by scripts/clientcheck.sh with node after tsc: the openapi-typescript +
// openapi-fetch client over real responses (internal/api's golden bodies,
// TIX_BODIES_GOLDEN) with one enum value rewritten to a value it does not know
// (the cases of scripts/clientcheck/recorded/cases.json, TIX_CLIENTCHECK_CASES).
// Each response must be accepted and give the value as it came.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import createClient from "openapi-fetch";
import type { paths } from "./schema";

type Case = { name: string; golden: string; path: string[]; unknown: string };

// The golden entry titled title: the line after "title: METHOD path -> status",
// its masked random values (<ticket_number#3>) given back a valid form.
function golden(title: string): string {
  const lines = readFileSync(process.env.TIX_BODIES_GOLDEN ?? "", "utf8").split("\n");
  const at = lines.findIndex((l) => l.startsWith(title + ": "));
  if (at < 0) throw new Error(`no golden entry ${title}`);
  return lines[at + 1]
    .replace(/<ticket_number#([0-9]+)>/g, (_, n: string) => "TIX-" + n.padStart(6, "0"))
    .replace(/<([a-z_0-9]+)#([0-9]+)>/g, "$1_$2");
}

function rewrite(c: Case): string {
  let holder: any = JSON.parse(golden(c.golden));
  const root = holder;
  for (const p of c.path.slice(0, -1)) holder = holder?.[p];
  const last = c.path[c.path.length - 1];
  if (typeof holder?.[last] !== "string") throw new Error(`${c.name}: ${c.path.join(".")} is not a string`);
  holder[last] = c.unknown;
  return JSON.stringify(root);
}

function at(v: unknown, path: string[]): unknown {
  return path.reduce((x: any, p) => x?.[p], v);
}

// One call of the generated client per case: its typed response.
async function call(c: Case, baseUrl: string): Promise<unknown> {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: "Bearer sk_test_clientcheck" } });
  switch (c.name) {
    case "event kind":
      return (await client.GET("/events", {})).data;
    case "order status":
      return (await client.GET("/orders/{id}", { params: { path: { id: "ord_1" } } })).data;
    case "ticket status":
      return (await client.GET("/orders/{id}/tickets", { params: { path: { id: "ord_1" } } })).data;
    case "delivery status":
      return (await client.GET("/webhook-deliveries", {})).data;
  }
  throw new Error(`no call for the case ${c.name}`);
}

async function check(c: Case): Promise<void> {
  const body = rewrite(c);
  const srv = createServer((_, res) => {
    res.writeHead(200, { "Content-Type": "application/json", "Tix-Request-Id": "req_clientcheck", "Tix-Version": "2026-06-01" });
    res.end(body);
  });
  await new Promise<void>((ok) => srv.listen(0, "127.0.0.1", ok));
  try {
    const data = await call(c, `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`);
    const got = at(data, c.path);
    if (got !== c.unknown) throw new Error(`${c.name}: got ${JSON.stringify(got)}, want ${c.unknown}`);
  } finally {
    srv.close();
  }
}

const cases: Case[] = JSON.parse(readFileSync(process.env.TIX_CLIENTCHECK_CASES ?? "", "utf8"));
for (const c of cases) await check(c);
console.log(`    TypeScript client: ${cases.length} unknown enum values accepted as they came`);
