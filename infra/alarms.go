package main

import (
	"fmt"
	"sort"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsses"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"tix/internal/queue"
	"tix/internal/store"
)

// alarmFunc makes an alarm: metric above threshold in periods periods in a
// row, publishing to the alarm topic.
type alarmFunc func(cid, name, desc string, metric awscloudwatch.IMetric, threshold float64, periods int)

// newAlarms makes the alarm topic (email subscribed when set) and the alarms
// of the API, the functions, the table and the dead-letter queues; with
// pressureAlarms, those of transaction conflicts, SES reputation (configSet:
// nil with email off) and provisioned-concurrency spillover.
func newAlarms(stack awscdk.Stack, stage, prefix, email string, apiStage awsapigatewayv2.HttpStage,
	fns map[string]awslambda.Function, table awsdynamodb.Table, dlqs map[string]awssqs.Queue,
	configSet awsses.ConfigurationSet, provisioned map[string]int) awssns.Topic {
	topic := newAlarmTopic(stack, stage, prefix, email)
	alarmN := alarmMaker(stack, prefix, awscloudwatchactions.NewSnsAction(topic))
	alarm := func(cid, name, desc string, metric awscloudwatch.IMetric, threshold float64) {
		alarmN(cid, name, desc, metric, threshold, 1)
	}
	apiAlarms(alarm, prefix, apiStage)
	functionAlarms(alarm, fns)
	storageAlarms(alarm, prefix, table, dlqs)
	pressureAlarms(alarmN, prefix, table, fns, configSet, provisioned)
	return topic
}

// oneAlarm is an alarm that fires on one bad period.
type oneAlarm func(cid, name, desc string, metric awscloudwatch.IMetric, threshold float64)

// alarmMaker makes alarms that publish to action when raised and cleared.
func alarmMaker(stack awscdk.Stack, prefix string, action awscloudwatch.IAlarmAction) alarmFunc {
	return func(cid, name, desc string, metric awscloudwatch.IMetric, threshold float64, periods int) {
		a := awscloudwatch.NewAlarm(stack, jsii.String(cid), &awscloudwatch.AlarmProps{
			AlarmName:          jsii.String(prefix + "-" + name),
			AlarmDescription:   jsii.String(desc),
			Metric:             metric,
			Threshold:          jsii.Number(threshold),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			EvaluationPeriods:  jsii.Number(float64(periods)),
			DatapointsToAlarm:  jsii.Number(float64(periods)),
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING, // no traffic is not an incident
		})
		a.AddAlarmAction(action)
		a.AddOkAction(action)
	}
}

// apiAlarms watch the HTTP API: 5xx and 429 rates, p99 latency.
func apiAlarms(alarm oneAlarm, prefix string, apiStage awsapigatewayv2.HttpStage) {
	five := awscdk.Duration_Minutes(jsii.Number(5))
	alarm("Api5xxAlarm", "api-5xx",
		fmt.Sprintf("API 5xx above %.0f%% of requests over 5 minutes (once there are at least %d of them)", Alarm5xxPercent, Alarm5xxMinCount),
		awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String(fmt.Sprintf("IF(errors >= %d, 100 * errors / requests, 0)", Alarm5xxMinCount)),
			UsingMetrics: &map[string]awscloudwatch.IMetric{
				"errors":   apiStage.MetricServerError(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}),
				"requests": apiStage.MetricCount(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}),
			},
			Label:  jsii.String("5xx %"),
			Period: five,
		}), Alarm5xxPercent)
	alarm("ApiLatencyAlarm", "api-p99-latency",
		fmt.Sprintf("API p99 latency above %d ms over 5 minutes", AlarmP99LatencyMs),
		apiStage.MetricLatency(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("p99")}), AlarmP99LatencyMs)
	alarm("Api429Alarm", "api-429",
		fmt.Sprintf("API 429 (throttled: the stage's throttle or a key's budget) above %.0f%% of requests over 5 minutes (once there are at least %d of them)", Alarm429Percent, Alarm429MinCount),
		awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String(fmt.Sprintf("IF(throttled >= %d, 100 * throttled / requests, 0)", Alarm429MinCount)),
			UsingMetrics: &map[string]awscloudwatch.IMetric{
				"throttled": awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(prefix), MetricName: jsii.String(Api429Metric),
					Period: five, Statistic: jsii.String("Sum")}),
				"requests": apiStage.MetricCount(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}),
			},
			Label:  jsii.String("429 %"),
			Period: five,
		}), Alarm429Percent)
}

// functionAlarms watch each function: errors, throttles, p99 duration.
func functionAlarms(alarm oneAlarm, fns map[string]awslambda.Function) {
	five := awscdk.Duration_Minutes(jsii.Number(5))
	for _, f := range Functions {
		fn := fns[f.Name]
		alarm(camel(f.Name)+"ErrorsAlarm", f.Name+"-errors",
			"functions/"+f.Name+": any invocation error (crash, timeout, sweep failure) in 5 minutes",
			fn.MetricErrors(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}), 0)
		alarm(camel(f.Name)+"ThrottlesAlarm", f.Name+"-throttles",
			"functions/"+f.Name+": any throttled invocation in 5 minutes (account or mapping concurrency)",
			fn.MetricThrottles(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}), 0)
	}
	for _, f := range Functions {
		limit := float64(f.Timeout.Milliseconds()) * AlarmDurationPercent / 100
		alarm(camel(f.Name)+"DurationAlarm", f.Name+"-p99-duration",
			fmt.Sprintf("functions/%s: p99 duration above %.0f%% of its %s timeout over 5 minutes", f.Name, AlarmDurationPercent, f.Timeout),
			fns[f.Name].MetricDuration(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("p99")}), limit)
	}
}

// storageAlarms watch the table's throttles and the queues: dead letters and
// the oldest message's age.
func storageAlarms(alarm oneAlarm, prefix string, table awsdynamodb.Table, dlqs map[string]awssqs.Queue) {
	five := awscdk.Duration_Minutes(jsii.Number(5))
	for i, group := range metricGroups(tableThrottles(table, five)) {
		cid, name := "TableThrottlesAlarm", "dynamodb-throttles"
		if i > 0 {
			cid, name = fmt.Sprintf("TableThrottlesAlarm%d", i+1), fmt.Sprintf("dynamodb-throttles-%d", i+1)
		}
		alarm(cid, name,
			"DynamoDB: any throttled read or write on the table or an index in 5 minutes (a hot key: see docs/ARCHITECTURE.md, where it goes next)",
			awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
				Expression:   jsii.String("SUM(METRICS())"),
				UsingMetrics: &group,
				Label:        jsii.String("throttle events"),
				Period:       five,
			}), 0)
	}
	for _, name := range queue.Queues {
		alarm(camel(name)+"DlqAlarm", queue.DLQ(name)+"-depth",
			"SQS "+prefix+"-"+queue.DLQ(name)+": messages that failed "+fmt.Sprint(queue.MaxReceives)+" times; inspect and redrive",
			dlqs[name].MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Maximum")}), 0)
		alarm(camel(name)+"AgeAlarm", name+"-oldest-age",
			fmt.Sprintf("SQS %s-%s: a message waited over %d minutes (no message is delayed longer than SQS's 15): its consumer is failing, throttled or capped", prefix, name, AlarmOldestMessageSeconds/60),
			awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String("AWS/SQS"), MetricName: jsii.String("ApproximateAgeOfOldestMessage"),
				DimensionsMap: &map[string]*string{"QueueName": jsii.String(prefix + "-" + name)}, Period: five, Statistic: jsii.String("Maximum")}),
			AlarmOldestMessageSeconds)
	}
}

// pressureAlarms are the alarms of what an on-sale or a bad mailing list
// wears out: the table's transaction conflicts; with email on, the bounce
// and complaint rates of the stage's SES configuration set; for each function
// with provisioned concurrency, invocations that spilled past it.
func pressureAlarms(alarm alarmFunc, prefix string, table awsdynamodb.Table, fns map[string]awslambda.Function,
	configSet awsses.ConfigurationSet, provisioned map[string]int) {
	metric := func(ns, name, stat string, period awscdk.Duration, dims map[string]*string) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(ns), MetricName: jsii.String(name),
			DimensionsMap: &dims, Period: period, Statistic: jsii.String(stat)})
	}
	alarm("TableTxConflictsAlarm", "dynamodb-transaction-conflicts",
		fmt.Sprintf("DynamoDB: over %d transaction conflicts in 5 minutes, %d periods in a row: a hot item (stock shard, seat, promo code) that orders fight over; see README, Stock of a hot tier", AlarmTxConflicts, AlarmTxConflictPeriods),
		metric("AWS/DynamoDB", "TransactionConflict", "Sum", awscdk.Duration_Minutes(jsii.Number(5)), map[string]*string{"TableName": table.TableName()}),
		AlarmTxConflicts, AlarmTxConflictPeriods)
	if configSet != nil {
		// The configuration set's rates, not the account's: every message of
		// this stage is sent with it, so they are this stage's own mail and
		// name it; the account-level metric (the one SES reviews) mixes in
		// other senders and stages of the account and region, which this
		// stack cannot fix, and would alarm in every stage at once.
		hour := awscdk.Duration_Hours(jsii.Number(1))
		dims := map[string]*string{"ses:configuration-set": configSet.ConfigurationSetName()}
		for _, r := range []struct {
			cid, name, metric, what string
			limit, review           float64
		}{
			{"SesBounceRateAlarm", "ses-bounce-rate", "Reputation.BounceRate", "bounce", AlarmSESBounceRate, SESReviewBounceRate},
			{"SesComplaintRateAlarm", "ses-complaint-rate", "Reputation.ComplaintRate", "complaint", AlarmSESComplaintRate, SESReviewComplaintRate},
		} {
			alarm(r.cid, r.name,
				fmt.Sprintf("SES configuration set %s: %s rate above %g%% (SES reviews the account at %g%%); check who the mail goes to and the suppression list", prefix, r.what, r.limit*100, r.review*100),
				metric("AWS/SES", r.metric, "Maximum", hour, dims), r.limit, 1)
		}
	}
	names := make([]string, 0, len(provisioned))
	for f := range provisioned {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		if provisioned[f] == 0 || fns[f] == nil {
			continue
		}
		fn := fns[f].FunctionName()
		alarm(camel(f)+"SpilloverAlarm", f+"-spillover",
			fmt.Sprintf("functions/%s: invocations beyond its %d provisioned instances (alias %s) in %d minutes in a row, served by on-demand instances with cold starts: raise provisionedConcurrency", f, provisioned[f], LiveAlias, AlarmSpilloverMinutes),
			metric("AWS/Lambda", "ProvisionedConcurrencySpilloverInvocations", "Sum", awscdk.Duration_Minutes(jsii.Number(1)),
				map[string]*string{"FunctionName": fn, "Resource": awscdk.Fn_Join(jsii.String(""), &[]*string{fn, jsii.String(":" + LiveAlias)})}),
			0, AlarmSpilloverMinutes)
	}
}

// More alarm thresholds (the first ones are in stack.go).
const (
	Alarm429Percent      = 5.0  // API 429 / requests over 5 minutes, in percent
	Alarm429MinCount     = 50   // ... once at least this many 429 came
	AlarmDurationPercent = 80.0 // a function's p99 duration, in percent of its timeout
	// AlarmOldestMessageSeconds: the age of a work queue's oldest message.
	// Timers are delayed up to SQS's 15 minutes (longer waits are hops).
	AlarmOldestMessageSeconds = 30 * 60
	// AlarmMaxMetrics is CloudWatch's limit of metrics in one alarm, the
	// expression included.
	AlarmMaxMetrics = 10
	// Api429Metric counts the API's 429 responses from its access log, in
	// the stack's own namespace (tix-<stage>).
	Api429Metric = "Api429"
)

// metricGroups splits an alarm's metrics into groups that fit
// AlarmMaxMetrics with their SUM expression, in a stable order (the table's
// throttle metrics grow by two with each index).
func metricGroups(m map[string]awscloudwatch.IMetric) []map[string]awscloudwatch.IMetric {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	var groups []map[string]awscloudwatch.IMetric
	for i, n := range names {
		if i%(AlarmMaxMetrics-1) == 0 {
			groups = append(groups, map[string]awscloudwatch.IMetric{})
		}
		groups[len(groups)-1][n] = m[n]
	}
	return groups
}

// NoAlarmEmailWarning is the id of the synth warning of a stack whose alarms
// reach nobody.
const NoAlarmEmailWarning = "tix:noAlarmEmail"

// newAlarmTopic is the SNS topic the alarms publish to (email subscribed when
// set). Alarm messages carry no secrets: the topic uses no KMS key (one would
// need a key policy statement for CloudWatch).
func newAlarmTopic(stack awscdk.Stack, stage, prefix, email string) awssns.Topic {
	topic := awssns.NewTopic(stack, jsii.String("Alarms"), &awssns.TopicProps{
		TopicName:   jsii.String(prefix + "-alarms"),
		DisplayName: jsii.String("tix " + stage + " alarms"),
		EnforceSSL:  jsii.Bool(true), // a topic policy denies publishing without TLS
	})
	// The topic has a policy now (the TLS rule), which replaces SNS's default
	// one: without this statement CloudWatch could not publish the alarms.
	topic.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("CloudWatchAlarmsPublish"),
		Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
		Actions:    jsii.Strings("sns:Publish"),
		Resources:  jsii.Strings(*topic.TopicArn()),
		Conditions: &map[string]any{
			"ArnLike":      map[string]any{"aws:SourceArn": "arn:" + *stack.Partition() + ":cloudwatch:" + *stack.Region() + ":" + *stack.Account() + ":alarm:" + prefix + "-*"},
			"StringEquals": map[string]any{"aws:SourceAccount": *stack.Account()},
		},
	}))
	if email != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(email), nil))
	} else {
		awscdk.Annotations_Of(topic).AddWarningV2(jsii.String(NoAlarmEmailWarning), jsii.String(
			"no alarmEmail: the alarms publish to topic "+prefix+"-alarms, which nobody is subscribed to. "+
				"Deploy with ALARM_EMAIL=oncall@example.com (make) or -c alarmEmail=..., or subscribe on-call to the AlarmTopicArn output"))
	}
	return topic
}

// tableThrottles are the DynamoDB throttle metrics of the table and each
// index, reads and writes, by their names in the alarm's expression.
func tableThrottles(table awsdynamodb.Table, period awscdk.Duration) map[string]awscloudwatch.IMetric {
	metric := func(name string, dims map[string]*string) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("AWS/DynamoDB"), MetricName: jsii.String(name),
			DimensionsMap: &dims, Period: period, Statistic: jsii.String("Sum"),
		})
	}
	throttles := map[string]awscloudwatch.IMetric{
		"tr": metric("ReadThrottleEvents", map[string]*string{"TableName": table.TableName()}),
		"tw": metric("WriteThrottleEvents", map[string]*string{"TableName": table.TableName()}),
	}
	for i, ix := range store.Table.Indexes {
		dims := map[string]*string{"TableName": table.TableName(), "GlobalSecondaryIndexName": jsii.String(ix.Name)}
		throttles[fmt.Sprintf("r%d", i)] = metric("ReadThrottleEvents", dims)
		throttles[fmt.Sprintf("w%d", i)] = metric("WriteThrottleEvents", dims)
	}
	return throttles
}

// Thresholds of the alarms on what runs out under pressure (pressureAlarms).
const (
	// AlarmTxConflicts: DynamoDB TransactionConflict events on the table in
	// 5 minutes, for AlarmTxConflictPeriods periods in a row. An order runs
	// one TransactWriteItems on a tier's stock shards (and its seats, its
	// promo code), which every order of the tier shares: two orders on one
	// shard within a few milliseconds conflict, and store.transact retries
	// the loser with backoff (up to 8 attempts), so some conflicts are the
	// normal cost of a rush. About 3 a second for 10 minutes is no longer a
	// burst but a hot item (a tier with too few shards, a seat or a promo
	// code everyone wants), where orders slow down and, past the retries, fail.
	AlarmTxConflicts       = 1000
	AlarmTxConflictPeriods = 2
	// AlarmSESBounceRate and AlarmSESComplaintRate: SES's reputation rates
	// (fractions) of the stage's configuration set, highest in an hour. SES
	// puts an account under review at a bounce rate of 5% and a complaint
	// rate of 0.1% and may pause its sending at 10% and 0.5% (SES developer
	// guide, "Reputation metrics messages"): the alarms fire at half the
	// review thresholds, while there is time to find the cause.
	AlarmSESBounceRate    = SESReviewBounceRate / 2
	AlarmSESComplaintRate = SESReviewComplaintRate / 2
	// SES's review thresholds of an account's reputation rates.
	SESReviewBounceRate    = 0.05
	SESReviewComplaintRate = 0.001
	// AlarmSpilloverMinutes: minutes in a row with invocations beyond a
	// function's provisioned concurrency (served by on-demand instances,
	// with cold starts), which says the provisioned figure is too low.
	AlarmSpilloverMinutes = 3
)
