// Compiled with tsc --strict against the types openapi-typescript generates from
// internal/api/openapi.yaml (scripts/clientcheck.sh): it proves that a
// TypeScript integrator can build every request variant and read what the API
// and its webhooks send.
import createClient from "openapi-fetch";
import type { components, paths, webhooks } from "./schema";

type Schemas = components["schemas"];

const client = createClient<paths>({ baseUrl: "http://127.0.0.1:8080/v1" });

export async function createOrders(): Promise<void> {
  const buyer: Schemas["Buyer"] = { email: "buyer@example.com" };
  const variants: Schemas["OrderCreateRequest"][] = [
    { buyer, tier_id: "tier_1", quantity: 2 },
    { buyer, seat_reservation_ids: ["rsv_1"] },
    { buyer, standing_items: [{ tier_id: "tier_s", qty: 1 }] },
  ];
  for (const body of variants) {
    const { data, error } = await client.POST("/orders", {
      params: { header: { "Idempotency-Key": "k1" } },
      body,
    });
    if (data) console.log(data.poll_token, data.payment.qr_payload);
    if (error) console.log(error.error.code);
  }
  await client.POST("/orders/preview", { body: { seat_reservation_ids: ["rsv_1"] } });
  // outcome is optional: an empty body is a valid SimulatePaymentRequest.
  await client.POST("/orders/{id}/simulate-payment", { params: { path: { id: "ord_1" } }, body: {} });
  const { data } = await client.GET("/orders/{id}", { params: { path: { id: "ord_1" } } });
  if (data?.buyer) console.log(data.buyer.email);
}

export function readSeating(s: Schemas["SeatingResponse"]): unknown {
  const decorations: Record<string, unknown> | null | undefined = s.layout?.decorations;
  const shape: Record<string, unknown> | null = s.zones[0].shape;
  return [decorations?.["stage"], shape?.["points"]];
}

// WebhookEnvelope narrows on its type.
export function handle(env: Schemas["WebhookEnvelope"]): string {
  switch (env.type) {
    case "order.paid":
    case "order.cancelled":
    case "order.refunded":
      return `${env.livemode} ${env.data.order.status} ${env.data.order.is_paid}`;
    case "endpoint.verify":
      return env.data.nonce;
    case "webhook.test":
      return String(env.data["message"]);
    default:
      return "ignored";
  }
}

type OrderPaid = NonNullable<webhooks["order.paid"]["post"]["requestBody"]>["content"]["application/json"];
export const paidLivemode = (e: OrderPaid): boolean => e.livemode;
