package main

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"tix/internal/api"
)

// The live payment parts of the stack: the notifications route, the public
// and bank URLs of the functions that call T-Bank, no password anywhere, and
// a template without a dependency cycle.

// TestNotificationRoute: POST /v1/payment-notifications/tbank reaches the
// orders function without any authorizer (the bank has no API key: the Token
// under the terminal's password authenticates it), with its own throttle
// (route settings), apart from the rest of the API's.
func TestNotificationRoute(t *testing.T) {
	for _, stage := range stages {
		rate, burst := float64(NotificationRateLimit), float64(NotificationBurstLimit)
		if stage == ProdStage {
			rate, burst = float64(prodOnSale.NotificationRateLimit), float64(prodOnSale.NotificationBurstLimit)
		}
		checkOwnRoute(t, stage, "POST /payment-notifications/tbank", "orders", rate, burst)
	}
	if NotificationRoutePath != "/payment-notifications/tbank" {
		t.Errorf("NotificationRoutePath %q: T-Bank is given <public URL>/v1/payment-notifications/tbank", NotificationRoutePath)
	}
}

// checkOwnRoute checks a route that has no authorizer and a throttle of its
// own: it reaches fn's integration (the function, or its alias with
// provisioned concurrency), the API may invoke fn on it, the stage's route
// settings give it rate and burst, and the stage depends on the route.
func checkOwnRoute(t *testing.T, stage, routeKey, fn string, rate, burst float64) {
	t.Helper()
	path := strings.TrimPrefix(routeKey, "POST ")
	apiID, _ := only(t, stage, "AWS::ApiGatewayV2::Api")
	fnID := functionIDs(t, stage)[fn]
	target := map[string]bool{fnID: true}
	for id, a := range resources(t, stage, "AWS::Lambda::Alias") {
		target[id] = refID(props(a)["FunctionName"]) == fnID
	}
	var route map[string]any
	var routeID string
	for id, r := range resources(t, stage, "AWS::ApiGatewayV2::Route") {
		if props(r)["RouteKey"] == routeKey {
			route, routeID = props(r), id
		}
	}
	if route == nil {
		t.Fatalf("%s: no route %s", stage, routeKey)
	}
	if refID(route["ApiId"]) != apiID {
		t.Errorf("%s: route %s is on %v, want the API %s", stage, routeKey, route["ApiId"], apiID)
	}
	integrationID := strings.TrimSuffix(strings.TrimPrefix(flat(route["Target"]), "integrations/${"), "}")
	in, _ := templates[stage]["Resources"].(map[string]any)[integrationID].(map[string]any)
	if in == nil || !target[refID(props(in)["IntegrationUri"])] {
		t.Errorf("%s: route %s targets %v, want the %s function's integration", stage, routeKey, route["Target"], fn)
	}
	if at, ok := route["AuthorizationType"]; (ok && at != "NONE") || route["AuthorizerId"] != nil || route["AuthorizationScopes"] != nil {
		t.Errorf("%s: route %s has an authorizer: %v", stage, routeKey, route)
	}
	invokes := false
	for _, pm := range resources(t, stage, "AWS::Lambda::Permission") {
		p := props(pm)
		invokes = invokes || (p["Principal"] == "apigateway.amazonaws.com" && p["Action"] == "lambda:InvokeFunction" &&
			target[refID(p["FunctionName"])] && strings.HasSuffix(flat(p["SourceArn"]), path))
	}
	if !invokes {
		t.Errorf("%s: no permission for the API to invoke %s on %s", stage, fn, routeKey)
	}
	_, st := only(t, stage, "AWS::ApiGatewayV2::Stage")
	settings, _ := props(st)["RouteSettings"].(map[string]any)
	got, _ := settings[routeKey].(map[string]any)
	if got["ThrottlingRateLimit"] != rate || got["ThrottlingBurstLimit"] != burst {
		t.Errorf("%s: route settings of %s %v, want its own throttle %v/%v", stage, routeKey, got, rate, burst)
	}
	if deps := fmt.Sprint(st["DependsOn"]); !strings.Contains(deps, routeID) {
		t.Errorf("%s: the stage depends on %s, want the route %s (a route setting needs its route)", stage, deps, routeID)
	}
}

// gatewayRoute is the route key API Gateway selects for a request, as HTTP
// APIs do: a route whose path matches in full before a greedy {proxy+} one
// (the longest literal prefix first), a route of the request's method before
// ANY, and $default when none matches.
func gatewayRoute(method, path string) string {
	best, bestScore := "$default", -1
	for key := range Routes {
		m, p, ok := strings.Cut(key, " ")
		if !ok || (m != "ANY" && m != method) {
			continue
		}
		score := -1
		if prefix, greedy := strings.CutSuffix(p, "/{proxy+}"); greedy {
			if strings.HasPrefix(path, prefix+"/") && len(path) > len(prefix)+1 {
				score = 2 * len(prefix)
			}
		} else if p == path {
			score = 10000
		} else if pathParamsMatch(p, path) {
			score = 5000 // a route with {param} segments, before any greedy one
		}
		if score < 0 {
			continue
		}
		if m != "ANY" {
			score++
		}
		if score > bestScore {
			best, bestScore = key, score
		}
	}
	return best
}

// pathParamsMatch reports whether path matches route path p segment by
// segment, a {param} segment matching any one non-empty segment.
func pathParamsMatch(p, path string) bool {
	ps, xs := strings.Split(p, "/"), strings.Split(path, "/")
	if len(ps) != len(xs) || !strings.Contains(p, "{") {
		return false
	}
	for i := range ps {
		if strings.HasPrefix(ps[i], "{") && strings.HasSuffix(ps[i], "}") && !strings.HasSuffix(ps[i], "+}") {
			if xs[i] == "" {
				return false
			}
		} else if ps[i] != xs[i] {
			return false
		}
	}
	return true
}

// TestGatewaySendsEveryRouteToItsGroup walks the router's own route table
// (api.Server.RouteKeys, by group) through the gateway's route selection: each
// route must reach the function of its group, or the function answers 404
// (a group's handler serves only its routes).
func TestGatewaySendsEveryRouteToItsGroup(t *testing.T) {
	param := regexp.MustCompile(`\{[^}]+\}`)
	srv := &api.Server{}
	srv.EnableDoor(nil, nil) // the door's routes too (app.EnableDoor)
	n := 0
	for _, g := range api.AllGroups {
		for _, key := range srv.RouteKeys(g) {
			method, pattern, _ := strings.Cut(key, " ")
			path := param.ReplaceAllString(pattern, "x1")
			rk := gatewayRoute(method, path)
			if got := Routes[rk]; got != string(g) {
				t.Errorf("%s (group %s): the gateway selects %q, served by %q", key, g, rk, got)
			}
			n++
		}
	}
	if n < 20 {
		t.Fatalf("only %d routes from the router; is RouteKeys broken?", n)
	}
	// The selection itself, on the cases that matter.
	for _, c := range []struct{ method, path, want string }{
		{"POST", "/payment-notifications/tbank", "POST /payment-notifications/tbank"},
		{"GET", "/payment-notifications/tbank", "$default"},
		{"POST", "/orders/ord_1/refund", "ANY /orders/{proxy+}"},
		{"GET", "/orders", "ANY /orders"},
		{"GET", "/docs", "$default"},
		{"GET", "/events/evt_1/check-in-stats", "ANY /events/{id}/check-in-stats"},
		{"GET", "/events/evt_1/admission-list", "ANY /events/{id}/admission-list"},
		{"POST", "/check-ins/batch", "ANY /check-ins/{proxy+}"},
		{"GET", "/events/evt_1/tiers", "ANY /events/{proxy+}"},
	} {
		if got := gatewayRoute(c.method, c.path); got != c.want {
			t.Errorf("%s %s: route %q, want %q", c.method, c.path, got, c.want)
		}
	}
}

// TestAcquirerEnvironment: the functions that call T-Bank (orders: live
// orders and refunds, and the notifications; timers: expiry, reconciliation;
// dashboard: the check of a terminal an owner connects)
// get the bank's URL and the public URL the bank posts to; dev's is built from
// the API's id, region and URL suffix, prod's from context publicUrl. The
// catalog, which serves openapi.json, gets the public URL as well.
func TestAcquirerEnvironment(t *testing.T) {
	acquirers := map[string]bool{}
	for _, f := range Functions {
		if f.Acquirer {
			acquirers[f.Name] = true
		}
	}
	if !reflect.DeepEqual(acquirers, map[string]bool{"orders": true, "timers": true, "dashboard": true}) {
		t.Errorf("acquirer functions %v, want orders, timers and dashboard", acquirers)
	}
	for _, stage := range stages {
		apiID, _ := only(t, stage, "AWS::ApiGatewayV2::Api")
		wantPublic := any(obj{"Fn::Join": []any{"", []any{
			"https://", obj{"Ref": apiID}, ".execute-api.", obj{"Ref": "AWS::Region"}, ".", obj{"Ref": "AWS::URLSuffix"},
		}}})
		wantBank := "https://securepay.tinkoff.ru"
		if stage == ProdStage {
			wantPublic, wantBank = prodPublicURL, prodTBankURL
		}
		all := templates[stage]["Resources"].(map[string]any)
		for name, id := range functionIDs(t, stage) {
			vars := props(all[id].(map[string]any))["Environment"].(map[string]any)["Variables"].(map[string]any)
			if (name == "catalog" || name == "dashboard") && !reflect.DeepEqual(vars["TIX_PUBLIC_URL"], wantPublic) {
				t.Errorf("%s %s (serves openapi.json or emails dashboard links): TIX_PUBLIC_URL %v, want %v", stage, name, flat(vars["TIX_PUBLIC_URL"]), flat(wantPublic))
			}
			if name == "dashboard" && vars["TIX_DASHBOARD_PATH"] != DashboardPath {
				t.Errorf("%s dashboard: TIX_DASHBOARD_PATH %v, want %s (below the stage)", stage, vars["TIX_DASHBOARD_PATH"], DashboardPath)
			}
			if !acquirers[name] {
				if (name != "catalog" && name != "dashboard" && vars["TIX_PUBLIC_URL"] != nil) || vars["TIX_TBANK_API_URL"] != nil {
					t.Errorf("%s %s: calls no acquirer but has TIX_PUBLIC_URL %v, TIX_TBANK_API_URL %v", stage, name, vars["TIX_PUBLIC_URL"], vars["TIX_TBANK_API_URL"])
				}
				continue
			}
			if !reflect.DeepEqual(vars["TIX_PUBLIC_URL"], wantPublic) {
				t.Errorf("%s %s: TIX_PUBLIC_URL %v, want %v", stage, name, flat(vars["TIX_PUBLIC_URL"]), flat(wantPublic))
			}
			if vars["TIX_TBANK_API_URL"] != wantBank {
				t.Errorf("%s %s: TIX_TBANK_API_URL %v, want %s", stage, name, vars["TIX_TBANK_API_URL"], wantBank)
			}
			// Outside any VPC: the bank is reached over the internet.
			if v := props(all[id].(map[string]any))["VpcConfig"]; v != nil {
				t.Errorf("%s %s: in a VPC (%v): the bank needs outbound internet (a NAT gateway)", stage, name, v)
			}
		}
		out := flat(templates[stage]["Outputs"].(map[string]any)["PaymentNotificationUrl"].(map[string]any)["Value"])
		if want := flat(wantPublic) + "/v1/payment-notifications/tbank"; out != want {
			t.Errorf("%s: output PaymentNotificationUrl %s, want %s", stage, out, want)
		}
	}
}

// TestNoPasswordInTemplate: terminal passwords live only sealed in the table;
// the acquirer functions open them with the keyring they read from Secrets
// Manager by ARN. No property anywhere is a password and no variable holds a
// secret's value.
func TestNoPasswordInTemplate(t *testing.T) {
	// Variables that would hold a secret's value.
	secretName := regexp.MustCompile(`(?i)password|passwd|^TIX_CURSOR_SECRET$|^TIX_WEBHOOK_KEYRING$`)
	for _, stage := range stages {
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch v := v.(type) {
			case map[string]any:
				for k, x := range v {
					if strings.EqualFold(k, "Password") || strings.EqualFold(k, "TerminalPassword") {
						t.Errorf("%s: %s.%s is a password in the template", stage, path, k)
					}
					walk(path+"."+k, x)
				}
			case []any:
				for i, x := range v {
					walk(fmt.Sprintf("%s[%d]", path, i), x)
				}
			case string:
				if strings.Contains(strings.ToLower(v), "tix-sim-password") {
					t.Errorf("%s: %s holds the simulator's password", stage, path)
				}
			}
		}
		walk("Resources", templates[stage]["Resources"])
		walk("Outputs", templates[stage]["Outputs"])

		secrets := map[string]string{}
		for id, s := range resources(t, stage, "AWS::SecretsManager::Secret") {
			secrets[strings.TrimPrefix(props(s)["Name"].(string), "tix-"+stage+"/")] = "${" + id + "}"
		}
		all := templates[stage]["Resources"].(map[string]any)
		for name, id := range functionIDs(t, stage) {
			vars := props(all[id].(map[string]any))["Environment"].(map[string]any)["Variables"].(map[string]any)
			for k, v := range vars {
				if secretName.MatchString(k) {
					t.Errorf("%s %s: %s=%s looks like a secret's value in the environment", stage, name, k, flat(v))
				}
			}
			if flat(vars["TIX_WEBHOOK_KEYRING_ARN"]) != secrets["webhook-keyring"] {
				t.Errorf("%s %s: TIX_WEBHOOK_KEYRING_ARN %s, want the keyring secret %s", stage, name, flat(vars["TIX_WEBHOOK_KEYRING_ARN"]), secrets["webhook-keyring"])
			}
		}
		// The acquirer functions may read the keyring (terminal passwords
		// open with it), through Secrets Manager.
		for _, f := range Functions {
			if !f.Acquirer {
				continue
			}
			readsKeyring := false
			for _, s := range roleStatements(t, stage, f.Name) {
				for _, r := range list(s["Resource"]) {
					for _, a := range list(s["Action"]) {
						readsKeyring = readsKeyring || (a == "secretsmanager:GetSecretValue" && flat(r) == secrets["webhook-keyring"])
					}
				}
			}
			if !readsKeyring {
				t.Errorf("%s %s: may not read the keyring secret, which opens terminal passwords", stage, f.Name)
			}
		}
	}
}

// references are the logical ids a resource depends on: Ref, Fn::GetAtt,
// ${X} in Fn::Sub, and DependsOn (pseudo parameters and parameters left out).
func references(r map[string]any, known map[string]bool) []string {
	seen := map[string]bool{}
	add := func(id string) {
		id, _, _ = strings.Cut(id, ".")
		if known[id] {
			seen[id] = true
		}
	}
	sub := regexp.MustCompile(`\$\{([^!}][^}]*)\}`)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch k {
				case "Ref":
					if s, ok := x.(string); ok {
						add(s)
					}
				case "Fn::GetAtt":
					switch g := x.(type) {
					case []any:
						add(fmt.Sprint(g[0]))
					case string:
						add(g)
					}
				case "Fn::Sub":
					var tmpl string
					switch s := x.(type) {
					case string:
						tmpl = s
					case []any:
						tmpl, _ = s[0].(string)
						walk(s[1:])
					}
					for _, m := range sub.FindAllStringSubmatch(tmpl, -1) {
						add(m[1])
					}
					continue
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(r["Properties"])
	for _, d := range list(r["DependsOn"]) {
		add(fmt.Sprint(d))
	}
	out := make([]string, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// cycle is a dependency cycle among a template's resources (nil when none),
// as CloudFormation would refuse it.
func cycle(resources map[string]any) []string {
	known := map[string]bool{}
	for id := range resources {
		known[id] = true
	}
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	var stack []string
	var visit func(id string) []string
	visit = func(id string) []string {
		switch state[id] {
		case visiting:
			for i, s := range stack {
				if s == id {
					return append(append([]string{}, stack[i:]...), id)
				}
			}
		case done:
			return nil
		}
		state[id] = visiting
		stack = append(stack, id)
		for _, dep := range references(resources[id].(map[string]any), known) {
			if c := visit(dep); c != nil {
				return c
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = done
		return nil
	}
	ids := make([]string, 0, len(resources))
	for id := range resources {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if c := visit(id); c != nil {
			return c
		}
	}
	return nil
}

// TestNoDependencyCycle: the functions' TIX_PUBLIC_URL names the API, whose
// routes and permissions name the functions; built from the stage's URL it
// would close a cycle CloudFormation refuses at deploy time (cdk synth does
// not look). The check is tried on a cycle first.
func TestNoDependencyCycle(t *testing.T) {
	looped := map[string]any{
		"Fn":    map[string]any{"Properties": map[string]any{"Env": map[string]any{"Fn::Join": []any{"", []any{"https://", map[string]any{"Ref": "Api"}, map[string]any{"Fn::GetAtt": []any{"Stage", "Url"}}}}}}},
		"Api":   map[string]any{"Properties": map[string]any{"Name": "x"}},
		"Route": map[string]any{"Properties": map[string]any{"Target": map[string]any{"Fn::Sub": "integrations/${Fn.Arn}"}}},
		"Stage": map[string]any{"Properties": map[string]any{"ApiId": map[string]any{"Ref": "Api"}}, "DependsOn": []any{"Route"}},
	}
	if c := cycle(looped); c == nil {
		t.Fatal("the cycle check missed Fn -> Stage -> Route -> Fn")
	}
	delete(looped["Stage"].(map[string]any), "DependsOn")
	if c := cycle(looped); c != nil {
		t.Fatalf("the cycle check found %v where there is none", c)
	}
	for _, stage := range stages {
		all := templates[stage]["Resources"].(map[string]any)
		if c := cycle(all); c != nil {
			t.Errorf("%s: dependency cycle %s", stage, strings.Join(c, " -> "))
		}
		// The check sees the edges that matter: orders names the API.
		fn := all[functionIDs(t, stage)["orders"]].(map[string]any)
		apiID, _ := only(t, stage, "AWS::ApiGatewayV2::Api")
		known := map[string]bool{}
		for id := range all {
			known[id] = true
		}
		deps := references(fn, known)
		if stage != ProdStage && !slices.Contains(deps, apiID) {
			t.Errorf("%s: orders depends on %v, want the API %s among them (TIX_PUBLIC_URL)", stage, deps, apiID)
		}
	}
}

// TestCheckPayments: the context URLs and the bank's timeout are checked at
// synth time.
func TestCheckPayments(t *testing.T) {
	good := []TixStackProps{
		{},
		{PublicURL: "https://api.tix.example", TBankAPIURL: "https://securepay.tinkoff.ru/"},
		{PublicURL: "https://tix.example/api"},
		{Settings: map[string]string{"TIX_TBANK_TIMEOUT": "15s"}}, // orders: 20 s
	}
	for _, p := range good {
		if _, err := checkPayments(&p); err != nil {
			t.Errorf("checkPayments(%+v): %v", p, err)
		}
	}
	lp, _ := checkPayments(&TixStackProps{PublicURL: "https://api.tix.example/"})
	if lp.publicURL != "https://api.tix.example" || lp.tbankURL != "https://securepay.tinkoff.ru" {
		t.Errorf("checkPayments: %+v, want the public URL without its slash and the production bank", lp)
	}
	bad := []TixStackProps{
		{PublicURL: "http://api.tix.example"},           // the bank posts to https only
		{PublicURL: "https://api.tix.example/v1"},       // tix adds /v1
		{PublicURL: "https://api.tix.example/?stage=1"}, // a query
		{PublicURL: "api.tix.example"},                  // no scheme
		{TBankAPIURL: "https://securepay.tinkoff.ru/v2"},
		{TBankAPIURL: "http://127.0.0.1:8089"},                    // the simulator is for the local stack
		{Settings: map[string]string{"TIX_TBANK_TIMEOUT": "16s"}}, // orders would be cut by Lambda first
	}
	for _, p := range bad {
		if _, err := checkPayments(&p); err == nil {
			t.Errorf("checkPayments(%+v) accepted it", p)
		}
	}
	for _, name := range []string{"TIX_PUBLIC_URL", "TIX_TBANK_API_URL"} {
		if err := CheckSettings(map[string]string{name: "https://x.example"}); err == nil || !strings.Contains(err.Error(), "context") {
			t.Errorf("settings %s: %v, want it refused, pointing at the context", name, err)
		}
	}
}
