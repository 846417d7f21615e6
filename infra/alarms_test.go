package main

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"
)

// TestAlarmShapes: the 5xx and 429 alarms are rates that fire at low traffic
// too (a minimum count of the errors, not of the requests); every function
// has a p99 duration alarm under its timeout; every alarm fits CloudWatch's
// limit of metrics, which the table's throttle alarm would pass with a
// fourth index (metricGroups splits it).
func TestAlarmShapes(t *testing.T) {
	for _, stage := range stages {
		for _, a := range resources(t, stage, "AWS::CloudWatch::Alarm") {
			p := props(a)
			name := strings.TrimPrefix(p["AlarmName"].(string), "tix-"+stage+"-")
			metrics, _ := p["Metrics"].([]any)
			if len(metrics) > AlarmMaxMetrics {
				t.Errorf("%s %s: %d metrics, CloudWatch takes %d", stage, name, len(metrics), AlarmMaxMetrics)
			}
			expr := ""
			for _, m := range metrics {
				if e, ok := m.(map[string]any)["Expression"].(string); ok {
					expr = e
				}
			}
			switch name {
			case "api-5xx":
				if want := fmt.Sprintf("IF(errors >= %d, 100 * errors / requests, 0)", Alarm5xxMinCount); expr != want || Alarm5xxMinCount > 10 {
					t.Errorf("%s api-5xx: expression %q, want %q (a minimum of errors, at most 10)", stage, expr, want)
				}
			case "api-429":
				if !strings.HasPrefix(expr, "IF(throttled >= ") {
					t.Errorf("%s api-429: expression %q", stage, expr)
				}
			}
			if fn, ok := strings.CutSuffix(name, "-p99-duration"); ok {
				for _, f := range Functions {
					if f.Name == fn && (num(p["Threshold"]) >= float64(f.Timeout.Milliseconds()) || p["ExtendedStatistic"] != "p99") {
						t.Errorf("%s %s: threshold %v ms, statistic %v; want p99 under the %s timeout", stage, name, p["Threshold"], p["ExtendedStatistic"], f.Timeout)
					}
				}
			}
		}
		holds(t, stage+": the 429 count from the access log", func() {
			tmpls[stage].HasResourceProperties(jsii.String("AWS::Logs::MetricFilter"), like(obj{
				"FilterPattern":         `{ $.status = "429" }`,
				"MetricTransformations": []any{obj{"MetricNamespace": "tix-" + stage, "MetricName": Api429Metric, "MetricValue": "1"}}}))
		})
	}
	// A fifth index: 2 + 2*5 metrics of the table's throttles.
	m := map[string]awscloudwatch.IMetric{}
	for i := range 12 {
		m[fmt.Sprintf("m%d", i)] = awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String("AWS/DynamoDB"), MetricName: jsii.String("ReadThrottleEvents")})
	}
	groups, n := metricGroups(m), 0
	for _, g := range groups {
		if len(g)+1 > AlarmMaxMetrics {
			t.Errorf("a group of %d metrics and its expression pass CloudWatch's %d", len(g), AlarmMaxMetrics)
		}
		n += len(g)
	}
	if n != len(m) || len(groups) != 2 {
		t.Errorf("metricGroups: %d groups of %d metrics in all, want 2 of %d", len(groups), n, len(m))
	}
}

// TestPressureAlarms: the table's transaction conflicts (every stage), the
// SES configuration set's bounce and complaint rates (only with email on:
// prod), and each provisioned function's spillover past its "live" alias
// (only with provisioned concurrency: prod's orders).
func TestPressureAlarms(t *testing.T) {
	for _, stage := range stages {
		tm := tmpls[stage]
		tableID, _ := only(t, stage, "AWS::DynamoDB::Table")
		holds(t, stage+": the transaction conflicts alarm", func() {
			tm.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), like(obj{
				"AlarmName": "tix-" + stage + "-dynamodb-transaction-conflicts", "Namespace": "AWS/DynamoDB",
				"MetricName": "TransactionConflict", "Dimensions": []any{obj{"Name": "TableName", "Value": obj{"Ref": tableID}}},
				"Statistic": "Sum", "Period": 300, "Threshold": AlarmTxConflicts,
				"EvaluationPeriods": AlarmTxConflictPeriods, "DatapointsToAlarm": AlarmTxConflictPeriods,
				"ComparisonOperator": "GreaterThanThreshold", "TreatMissingData": "notBreaching"}))
		})
		mailOn := stage == ProdStage
		sets := resources(t, stage, "AWS::SES::ConfigurationSet")
		if mailOn != (len(sets) == 1) {
			t.Fatalf("%s: %d configuration sets, want email on in prod only", stage, len(sets))
		}
		ses := 0
		for _, a := range resources(t, stage, "AWS::CloudWatch::Alarm") {
			p := props(a)
			if p["Namespace"] != "AWS/SES" {
				continue
			}
			ses++
			want := map[string]float64{"Reputation.BounceRate": AlarmSESBounceRate, "Reputation.ComplaintRate": AlarmSESComplaintRate}
			limit, ok := want[fmt.Sprint(p["MetricName"])]
			dims, _ := p["Dimensions"].([]any)
			if !ok || num(p["Threshold"]) != limit || len(dims) != 1 || p["Statistic"] != "Maximum" {
				t.Errorf("%s %v: metric %v, threshold %v, statistic %v, dimensions %v", stage, p["AlarmName"], p["MetricName"], p["Threshold"], p["Statistic"], dims)
				continue
			}
			d := dims[0].(map[string]any)
			for id := range sets {
				if d["Name"] != "ses:configuration-set" || (flat(d["Value"]) != "tix-"+stage && refID(d["Value"]) != id) {
					t.Errorf("%s %v: dimension %v, want ses:configuration-set of the stage's configuration set", stage, p["AlarmName"], d)
				}
			}
		}
		if want := map[bool]int{true: 2, false: 0}[mailOn]; ses != want {
			t.Errorf("%s: %d SES alarms, want %d (bounce and complaint rates, with email on)", stage, ses, want)
		}
		if AlarmSESBounceRate >= SESReviewBounceRate || AlarmSESComplaintRate >= SESReviewComplaintRate || SESReviewBounceRate != 0.05 || SESReviewComplaintRate != 0.001 {
			t.Errorf("SES alarms at %v and %v: want them below SES's review thresholds (5%%, 0.1%%)", AlarmSESBounceRate, AlarmSESComplaintRate)
		}
		fnIDs, spill := functionIDs(t, stage), map[string]bool{}
		for _, a := range resources(t, stage, "AWS::CloudWatch::Alarm") {
			p := props(a)
			if p["MetricName"] != "ProvisionedConcurrencySpilloverInvocations" {
				continue
			}
			fn := strings.TrimSuffix(strings.TrimPrefix(fmt.Sprint(p["AlarmName"]), "tix-"+stage+"-"), "-spillover")
			spill[fn] = true
			holds(t, stage+": "+fn+"'s spillover alarm", func() {
				tm.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), like(obj{
					"AlarmName": "tix-" + stage + "-" + fn + "-spillover", "Namespace": "AWS/Lambda",
					"Dimensions": assertions.Match_ArrayWith(&[]any{
						obj{"Name": "FunctionName", "Value": obj{"Ref": fnIDs[fn]}},
						obj{"Name": "Resource", "Value": obj{"Fn::Join": []any{"", []any{obj{"Ref": fnIDs[fn]}, ":" + LiveAlias}}}}}),
					"Statistic": "Sum", "Period": 60, "Threshold": 0,
					"EvaluationPeriods": AlarmSpilloverMinutes, "DatapointsToAlarm": AlarmSpilloverMinutes}))
			})
		}
		want := map[string]bool{}
		if stage == ProdStage {
			for fn := range prodOnSale.Provisioned {
				want[fn] = true
			}
		}
		if !reflect.DeepEqual(spill, want) {
			t.Errorf("%s: spillover alarms for %v, want the functions with provisioned concurrency %v", stage, spill, want)
		}
	}
}
