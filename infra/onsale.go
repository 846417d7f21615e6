package main

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// OnSale is what a stage prepares for an on-sale spike: warm throughput on the
// table and its indexes, concurrency for the sales functions and the API's
// throttle. The zero value is the everyday stack (docs/aws.md, Preparing an
// on-sale): nothing pre-warmed or reserved, the stage throttle of
// APIRateLimit/APIBurstLimit.
type OnSale struct {
	// TableWarmReads and TableWarmWrites are the table's warm throughput
	// (read and write units per second it serves at once, without
	// DynamoDB first splitting partitions). 0 leaves it unset: an on-demand
	// table's own baseline (MinWarmReads/MinWarmWrites). Raising it is billed
	// once and cannot be undone (warm throughput never goes down).
	TableWarmReads, TableWarmWrites int
	// IndexWarmReads and IndexWarmWrites are the same for each GSI.
	IndexWarmReads, IndexWarmWrites int
	// Reserved is reserved concurrency per function name (catalog, holds,
	// orders): that many concurrent instances kept for it, and no more.
	Reserved map[string]int
	// Provisioned is provisioned concurrency per function name: instances
	// started ahead (no cold start), billed by the hour while configured. A
	// function with it is published as a version behind alias "live", which
	// the API's routes invoke.
	Provisioned map[string]int
	// APIRateLimit and APIBurstLimit are the stage's default route throttling
	// (requests/s, burst); 0 takes the constants of the same names.
	APIRateLimit, APIBurstLimit int
	// NotificationRateLimit and NotificationBurstLimit are the bank's
	// notification route's own throttling (requests/s, burst); 0 takes the
	// constants of the same names.
	NotificationRateLimit, NotificationBurstLimit int
	// DeliverConcurrency caps the deliver function's invocations from its
	// queue (the mapping's maximum concurrency, 2-1,000); 0 keeps
	// DeliverMaxConcurrency. An on-sale's webhooks and email jobs need about
	// messages/s x seconds each / BatchSize (`make onsale-model` prints it).
	DeliverConcurrency int
	// Quotas are the account's quotas in the stack's region, as the operator
	// declares them; a zero field is AWS's default (DefaultQuotas). The values
	// above are checked against them, since AWS refuses a deploy past them.
	Quotas Quotas
}

// Quotas are the service quotas an on-sale's values must fit (Service Quotas
// console, per account and region).
type Quotas struct {
	// TableReads and TableWrites: DynamoDB "Table-level read/write throughput
	// limit" of on-demand tables, which bounds the table's and each index's
	// warm throughput (pre-warming cannot pass it).
	TableReads, TableWrites int
	// Concurrency: Lambda "Concurrent executions"; 100 of it always stay
	// unreserved.
	Concurrency int
	// APIRate and APIBurst: API Gateway "Throttle rate" and "Throttle burst
	// rate", the account's across every API of the region.
	APIRate, APIBurst int
}

// DefaultQuotas are AWS's default quotas (a new account may have less
// concurrency: declare it then).
var DefaultQuotas = Quotas{TableReads: 40000, TableWrites: 40000, Concurrency: 1000, APIRate: 10000, APIBurst: 5000}

// UnreservedConcurrency is the part of the account's concurrency Lambda keeps
// for functions without reserved concurrency.
const UnreservedConcurrency = 100

// orDefault fills the undeclared quotas with DefaultQuotas.
func (q Quotas) orDefault() Quotas {
	for _, f := range []struct{ v, def *int }{{&q.TableReads, &DefaultQuotas.TableReads}, {&q.TableWrites, &DefaultQuotas.TableWrites},
		{&q.Concurrency, &DefaultQuotas.Concurrency}, {&q.APIRate, &DefaultQuotas.APIRate}, {&q.APIBurst, &DefaultQuotas.APIBurst}} {
		if *f.v == 0 {
			*f.v = *f.def
		}
	}
	return q
}

// An on-demand table and each of its indexes start warm for this many units
// per second; warm throughput below it is refused by DynamoDB.
const (
	MinWarmReads  = 12000
	MinWarmWrites = 4000
	// LiveAlias is the alias of a function with provisioned concurrency.
	LiveAlias = "live"
)

// ParseOnSale reads the on-sale context values through get (nil or "" when
// unset): the numbers as integers, the concurrencies as "catalog=200,orders=100".
func ParseOnSale(get func(name string) any) (OnSale, error) {
	var o OnSale
	var errs []string
	ints := map[string]*int{
		"tableWarmReads": &o.TableWarmReads, "tableWarmWrites": &o.TableWarmWrites,
		"indexWarmReads": &o.IndexWarmReads, "indexWarmWrites": &o.IndexWarmWrites,
		"apiRateLimit": &o.APIRateLimit, "apiBurstLimit": &o.APIBurstLimit,
		"notificationRateLimit": &o.NotificationRateLimit, "notificationBurstLimit": &o.NotificationBurstLimit,
		"deliverConcurrency": &o.DeliverConcurrency,
		"quotaTableReads":    &o.Quotas.TableReads, "quotaTableWrites": &o.Quotas.TableWrites,
		"quotaConcurrency": &o.Quotas.Concurrency, "quotaApiRate": &o.Quotas.APIRate, "quotaApiBurst": &o.Quotas.APIBurst,
	}
	for name, p := range ints {
		var s string
		switch v := get(name).(type) {
		case nil:
		case float64: // a number in cdk.json
			s = strconv.FormatFloat(v, 'f', -1, 64)
		default:
			s = strings.TrimSpace(fmt.Sprint(v))
		}
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Sprintf("%s: want a whole number of units or requests per second, got %q", name, s))
		}
		*p = n
	}
	var err error
	if o.Reserved, err = parseConcurrency("reservedConcurrency", get("reservedConcurrency")); err != nil {
		errs = append(errs, err.Error())
	}
	if o.Provisioned, err = parseConcurrency("provisionedConcurrency", get("provisionedConcurrency")); err != nil {
		errs = append(errs, err.Error())
	}
	if len(errs) == 0 {
		if err := o.check(); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return OnSale{}, fmt.Errorf("on-sale context: %s", strings.Join(errs, "; "))
	}
	return o, nil
}

// parseConcurrency reads "catalog=200,orders=100" (or a JSON object of numbers).
func parseConcurrency(name string, v any) (map[string]int, error) {
	out := map[string]int{}
	add := func(fn, val string) error {
		n, err := strconv.Atoi(strings.TrimSpace(val))
		if err != nil || n < 1 {
			return fmt.Errorf("%s: %s=%q is not a positive whole number", name, fn, val)
		}
		out[strings.TrimSpace(fn)] = n
		return nil
	}
	switch v := v.(type) {
	case nil:
	case string:
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part == "" {
				continue
			}
			fn, val, ok := strings.Cut(part, "=")
			if !ok {
				return nil, fmt.Errorf("%s: want function=count pairs such as orders=100, got %q", name, part)
			}
			if err := add(fn, val); err != nil {
				return nil, err
			}
		}
	case map[string]any:
		for fn, val := range v {
			if err := add(fn, fmt.Sprint(val)); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("%s: want function=count pairs such as orders=100, got %T", name, v)
	}
	return out, nil
}

// check validates the values against the functions and DynamoDB's minimums.
func (o OnSale) check() error {
	var errs []string
	warm := []struct {
		name     string
		v, floor int
	}{
		{"tableWarmReads", o.TableWarmReads, MinWarmReads}, {"tableWarmWrites", o.TableWarmWrites, MinWarmWrites},
		{"indexWarmReads", o.IndexWarmReads, MinWarmReads}, {"indexWarmWrites", o.IndexWarmWrites, MinWarmWrites},
	}
	for _, w := range warm {
		if w.v != 0 && w.v < w.floor {
			errs = append(errs, fmt.Sprintf("%s %d is below an on-demand table's own %d", w.name, w.v, w.floor))
		}
	}
	known := map[string]bool{}
	for _, f := range Functions {
		known[f.Name] = true
	}
	for _, m := range []map[string]int{o.Reserved, o.Provisioned} {
		for fn := range m {
			if !known[fn] {
				errs = append(errs, fmt.Sprintf("concurrency for %q: not a function of the stack", fn))
			}
		}
	}
	if c := o.DeliverConcurrency; c != 0 && (c < 2 || c > 1000) {
		errs = append(errs, fmt.Sprintf("deliverConcurrency %d: an SQS mapping's maximum concurrency is 2 to 1000", c))
	}
	for fn, p := range o.Provisioned {
		if r, ok := o.Reserved[fn]; ok && p > r {
			errs = append(errs, fmt.Sprintf("%s: provisioned concurrency %d above its reserved %d", fn, p, r))
		}
	}
	errs = append(errs, o.overQuota()...)
	if len(errs) > 0 {
		sort.Strings(errs)
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// overQuota names each value above the account's quotas (o.Quotas), with the
// quota to raise and the context value that declares it once raised.
func (o OnSale) overQuota() []string {
	q := o.Quotas.orDefault()
	var errs []string
	over := func(what string, v, quota int, service, name, ctx string) {
		if v > quota {
			errs = append(errs, fmt.Sprintf("%s is %d, above the %s quota %q of %d: request an increase in Service Quotas, "+
				"then declare what was granted with -c %s=<granted value>", what, v, service, name, quota, ctx))
		}
	}
	over("tableWarmReads", o.TableWarmReads, q.TableReads, "DynamoDB", "Table-level read throughput limit", "quotaTableReads")
	over("tableWarmWrites", o.TableWarmWrites, q.TableWrites, "DynamoDB", "Table-level write throughput limit", "quotaTableWrites")
	over("indexWarmReads", o.IndexWarmReads, q.TableReads, "DynamoDB", "Table-level read throughput limit", "quotaTableReads")
	over("indexWarmWrites", o.IndexWarmWrites, q.TableWrites, "DynamoDB", "Table-level write throughput limit", "quotaTableWrites")
	rate, burst := o.throttle()
	over("the API throttle rate (apiRateLimit)", int(rate), q.APIRate, "API Gateway", "Throttle rate", "quotaApiRate")
	over("the API throttle burst (apiBurstLimit)", int(burst), q.APIBurst, "API Gateway", "Throttle burst rate", "quotaApiBurst")
	taken := 0 // reserved, and provisioned outside any reserved
	for fn, n := range o.Reserved {
		taken += max(n, o.Provisioned[fn])
	}
	for fn, n := range o.Provisioned {
		if _, ok := o.Reserved[fn]; !ok {
			taken += n
		}
	}
	if taken == 0 {
		return errs // nothing set aside: the account's pool, whatever its size
	}
	over(fmt.Sprintf("the concurrency set aside (reservedConcurrency, and provisionedConcurrency outside it) plus the %d Lambda keeps unreserved",
		UnreservedConcurrency), taken+UnreservedConcurrency, q.Concurrency, "Lambda", "Concurrent executions", "quotaConcurrency")
	return errs
}

// throttle is the stage's rate and burst limits.
func (o OnSale) throttle() (rate, burst float64) {
	return orDefault(o.APIRateLimit, APIRateLimit), orDefault(o.APIBurstLimit, APIBurstLimit)
}

// notificationThrottle is the notification route's rate and burst limits.
func (o OnSale) notificationThrottle() (rate, burst float64) {
	return orDefault(o.NotificationRateLimit, NotificationRateLimit), orDefault(o.NotificationBurstLimit, NotificationBurstLimit)
}

// orDefault is a context value, or def when it is unset (0).
func orDefault(v, def int) float64 {
	if v > 0 {
		return float64(v)
	}
	return float64(def)
}

// warm is a warm throughput, or nil when neither value is set.
func warm(reads, writes int) *awsdynamodb.WarmThroughput {
	if reads == 0 && writes == 0 {
		return nil
	}
	w := &awsdynamodb.WarmThroughput{}
	if reads > 0 {
		w.ReadUnitsPerSecond = jsii.Number(float64(reads))
	}
	if writes > 0 {
		w.WriteUnitsPerSecond = jsii.Number(float64(writes))
	}
	return w
}

// target is what the API invokes for function f: its "live" alias (a version
// with provisioned concurrency) when it has some, else the function.
func (b *build) target(f string, fn awslambda.Function, o OnSale) awslambda.IFunction {
	n := o.Provisioned[f]
	if n == 0 {
		return fn
	}
	return awslambda.NewAlias(b.stack, jsii.String(camel(f)+"LiveAlias"), &awslambda.AliasProps{
		AliasName:                       jsii.String(LiveAlias),
		Version:                         fn.CurrentVersion(),
		ProvisionedConcurrentExecutions: jsii.Number(float64(n)),
		Description:                     jsii.String(fmt.Sprintf("tix %s %s: %d provisioned instances for an on-sale", b.stage, f, n)),
	})
}
