package main

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// TestParseOnSale: context strings (-c name=value) and cdk.json numbers
// arrive as the on-sale settings; bad values fail the synth with the name.
func TestParseOnSale(t *testing.T) {
	ctx := map[string]any{
		"tableWarmReads": "60000", "tableWarmWrites": float64(40000), "indexWarmReads": "12000", "indexWarmWrites": "20000",
		"reservedConcurrency": "catalog=400, holds=100,orders=400", "provisionedConcurrency": map[string]any{"orders": float64(20)},
		"apiRateLimit": "30000", "apiBurstLimit": float64(10000), "notificationRateLimit": "300", "notificationBurstLimit": float64(600),
		"quotaTableReads": "60000", "quotaApiRate": float64(30000), "quotaApiBurst": "10000", "deliverConcurrency": "200",
	}
	got, err := ParseOnSale(func(n string) any { return ctx[n] })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, prodOnSale) {
		t.Errorf("ParseOnSale = %+v, want %+v", got, prodOnSale)
	}
	none, err := ParseOnSale(func(string) any { return nil })
	if err != nil || none.TableWarmReads != 0 || len(none.Reserved) != 0 || len(none.Provisioned) != 0 {
		t.Errorf("no context: %+v, %v; want the zero on-sale", none, err)
	}
	if r, b := none.throttle(); r != APIRateLimit || b != APIBurstLimit {
		t.Errorf("default throttle %v/%v, want %d/%d", r, b, APIRateLimit, APIBurstLimit)
	}
	if r, b := none.notificationThrottle(); r != NotificationRateLimit || b != NotificationBurstLimit {
		t.Errorf("default notification throttle %v/%v, want %d/%d", r, b, NotificationRateLimit, NotificationBurstLimit)
	}
	for name, bad := range map[string]map[string]any{
		"tableWarmWrites":        {"tableWarmWrites": "1000"}, // below the on-demand baseline
		"indexWarmReads":         {"indexWarmReads": "lots"},  // not a number
		"apiRateLimit":           {"apiRateLimit": "-5"},      // negative
		"notificationRateLimit":  {"notificationRateLimit": "fast"},
		"reservedConcurrency":    {"reservedConcurrency": "orders"},
		"payments":               {"reservedConcurrency": "payments=10"}, // no such function
		"provisionedConcurrency": {"provisionedConcurrency": "orders=0"},
		"above its reserved":     {"reservedConcurrency": "orders=10", "provisionedConcurrency": "orders=20"},
		"quotaApiBurst":          {"quotaApiBurst": "-1"},
		"deliverConcurrency":     {"deliverConcurrency": "5000"}, // above SQS mappings' 1,000
	} {
		if _, err := ParseOnSale(func(n string) any { return bad[n] }); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%v: error %v, want one naming %s", bad, err, name)
		}
	}
}

// TestOnSaleTemplate: prod (prepared for an on-sale) has warm throughput on
// the table and each index, reserved concurrency on the sales functions, the
// orders function's provisioned concurrency behind the alias its routes
// invoke, and the raised throttle (TestHTTPAPI); dev has none of them.
func TestOnSaleTemplate(t *testing.T) {
	for _, stage := range stages {
		tm := tmpls[stage]
		_, tr := only(t, stage, "AWS::DynamoDB::Table")
		p := props(tr)
		gsis := p["GlobalSecondaryIndexes"].([]any)
		if stage != ProdStage {
			if p["WarmThroughput"] != nil {
				t.Errorf("%s: table WarmThroughput %v, want none", stage, p["WarmThroughput"])
			}
			for _, g := range gsis {
				if w := g.(map[string]any)["WarmThroughput"]; w != nil {
					t.Errorf("%s: index WarmThroughput %v, want none", stage, w)
				}
			}
			holds(t, stage+": no reserved concurrency", func() {
				tm.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), like(obj{"ReservedConcurrentExecutions": assertions.Match_Absent()}))
			})
			holds(t, stage+": no alias", func() { tm.ResourceCountIs(jsii.String("AWS::Lambda::Alias"), jsii.Number(0)) })
			continue
		}
		holds(t, stage+": table warm throughput", func() {
			tm.HasResourceProperties(jsii.String("AWS::DynamoDB::Table"), like(obj{
				"WarmThroughput": obj{"ReadUnitsPerSecond": prodOnSale.TableWarmReads, "WriteUnitsPerSecond": prodOnSale.TableWarmWrites}}))
		})
		if len(gsis) == 0 {
			t.Errorf("%s: no indexes", stage)
		}
		for _, g := range gsis {
			g := g.(map[string]any)
			w, _ := g["WarmThroughput"].(map[string]any)
			if num(w["ReadUnitsPerSecond"]) != float64(prodOnSale.IndexWarmReads) || num(w["WriteUnitsPerSecond"]) != float64(prodOnSale.IndexWarmWrites) {
				t.Errorf("%s: index %v WarmThroughput %v, want %d reads, %d writes", stage, g["IndexName"], w, prodOnSale.IndexWarmReads, prodOnSale.IndexWarmWrites)
			}
		}
		fns := resources(t, stage, "AWS::Lambda::Function")
		ids := functionIDs(t, stage)
		for _, f := range Functions {
			got := props(fns[ids[f.Name]])["ReservedConcurrentExecutions"]
			want, ok := prodOnSale.Reserved[f.Name]
			if (!ok && got != nil) || (ok && num(got) != float64(want)) {
				t.Errorf("%s %s: ReservedConcurrentExecutions %v, want %d (0: none)", stage, f.Name, got, want)
			}
		}
		aliasID, alias := only(t, stage, "AWS::Lambda::Alias")
		ap := props(alias)
		if refID(ap["FunctionName"]) != ids["orders"] || ap["Name"] != LiveAlias ||
			num(ap["ProvisionedConcurrencyConfig"].(map[string]any)["ProvisionedConcurrentExecutions"]) != float64(prodOnSale.Provisioned["orders"]) {
			t.Errorf("%s: alias %v, want %s of orders with %d provisioned", stage, ap, LiveAlias, prodOnSale.Provisioned["orders"])
		}
		versionID, _ := only(t, stage, "AWS::Lambda::Version")
		if !strings.Contains(flat(ap["FunctionVersion"]), versionID) {
			t.Errorf("%s: alias version %v, want the function's version %s", stage, flat(ap["FunctionVersion"]), versionID)
		}
		viaAlias := 0
		for _, in := range resources(t, stage, "AWS::ApiGatewayV2::Integration") {
			if refID(props(in)["IntegrationUri"]) == aliasID {
				viaAlias++
			}
		}
		if viaAlias != 1 {
			t.Errorf("%s: %d integrations invoke the alias, want orders' one", stage, viaAlias)
		}
	}
}

// TestOnSaleQuotas: values above the account's quotas (AWS's defaults unless
// the operator declares what was granted) fail the synth with a message that
// names the quota to raise and the context value that declares it; the same
// values pass once the quota is declared.
func TestOnSaleQuotas(t *testing.T) {
	for _, c := range []struct {
		ctx   map[string]any
		quota string // named in the error, with the context value
		raise map[string]any
	}{
		{map[string]any{"tableWarmReads": "60000"}, `DynamoDB quota "Table-level read throughput limit" of 40000`, map[string]any{"quotaTableReads": "60000"}},
		{map[string]any{"tableWarmWrites": "40001"}, `DynamoDB quota "Table-level write throughput limit" of 40000`, map[string]any{"quotaTableWrites": "50000"}},
		{map[string]any{"indexWarmWrites": "60000"}, `DynamoDB quota "Table-level write throughput limit" of 40000`, map[string]any{"quotaTableWrites": "60000"}},
		{map[string]any{"indexWarmReads": "45000"}, `DynamoDB quota "Table-level read throughput limit" of 40000`, map[string]any{"quotaTableReads": "45000"}},
		{map[string]any{"reservedConcurrency": "catalog=500,holds=200,orders=800"}, `Lambda quota "Concurrent executions" of 1000`, map[string]any{"quotaConcurrency": "1600"}},
		// 900 reserved and 1 provisioned outside it: 1,001 with the 100 kept unreserved.
		{map[string]any{"reservedConcurrency": "catalog=400,holds=100,orders=400", "provisionedConcurrency": "webhooks=1"}, `Lambda quota "Concurrent executions" of 1000`, map[string]any{"quotaConcurrency": "1001"}},
		{map[string]any{"apiRateLimit": "30000"}, `API Gateway quota "Throttle rate" of 10000`, map[string]any{"quotaApiRate": "30000"}},
		{map[string]any{"apiBurstLimit": "10000"}, `API Gateway quota "Throttle burst rate" of 5000`, map[string]any{"quotaApiBurst": "10000"}},
	} {
		_, err := ParseOnSale(func(n string) any { return c.ctx[n] })
		var ctxName string
		for k := range c.raise {
			ctxName = k
		}
		if err == nil || !strings.Contains(err.Error(), c.quota) || !strings.Contains(err.Error(), "-c "+ctxName+"=") {
			t.Errorf("%v: error %v, want one naming the %s and -c %s", c.ctx, err, c.quota, ctxName)
		}
		both := map[string]any{}
		maps.Copy(both, c.ctx)
		maps.Copy(both, c.raise)
		if _, err := ParseOnSale(func(n string) any { return both[n] }); err != nil {
			t.Errorf("%v with the quota declared: %v", both, err)
		}
	}
	// The everyday stack fits the smallest account (a new one may have 10
	// concurrent executions): nothing is set aside.
	if _, err := ParseOnSale(func(n string) any { return map[string]any{"quotaConcurrency": "10"}[n] }); err != nil {
		t.Errorf("no on-sale values, 10 concurrent executions: %v", err)
	}
	// The defaults are AWS's.
	if DefaultQuotas != (Quotas{TableReads: 40000, TableWrites: 40000, Concurrency: 1000, APIRate: 10000, APIBurst: 5000}) {
		t.Errorf("DefaultQuotas %+v", DefaultQuotas)
	}
}
