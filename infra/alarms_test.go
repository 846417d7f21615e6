package main

import (
	"fmt"
	"strings"
	"testing"

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
