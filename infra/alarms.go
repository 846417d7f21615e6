package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"

	"tix/internal/queue"
	"tix/internal/store"
)

// newAlarms makes the alarm topic (email subscribed when set) and the alarms
// of the API, the functions, the table and the dead-letter queues.
func newAlarms(stack awscdk.Stack, stage, prefix, email string, apiStage awsapigatewayv2.HttpStage,
	fns map[string]awslambda.Function, table awsdynamodb.Table, dlqs map[string]awssqs.Queue) awssns.Topic {
	topic := newAlarmTopic(stack, stage, prefix, email)
	action := awscloudwatchactions.NewSnsAction(topic)
	five := awscdk.Duration_Minutes(jsii.Number(5))
	alarm := func(cid, name, desc string, metric awscloudwatch.IMetric, threshold float64) {
		a := awscloudwatch.NewAlarm(stack, jsii.String(cid), &awscloudwatch.AlarmProps{
			AlarmName:          jsii.String(prefix + "-" + name),
			AlarmDescription:   jsii.String(desc),
			Metric:             metric,
			Threshold:          jsii.Number(threshold),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
			EvaluationPeriods:  jsii.Number(1),
			DatapointsToAlarm:  jsii.Number(1),
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING, // no traffic is not an incident
		})
		a.AddAlarmAction(action)
		a.AddOkAction(action)
	}
	alarm("Api5xxAlarm", "api-5xx",
		fmt.Sprintf("API 5xx above %.0f%% of requests over 5 minutes (with at least %d requests)", Alarm5xxPercent, Alarm5xxMinCount),
		awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String(fmt.Sprintf("IF(requests >= %d, 100 * errors / requests, 0)", Alarm5xxMinCount)),
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
	for _, f := range Functions {
		fn := fns[f.Name]
		alarm(camel(f.Name)+"ErrorsAlarm", f.Name+"-errors",
			"functions/"+f.Name+": any invocation error (crash, timeout, sweep failure) in 5 minutes",
			fn.MetricErrors(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}), 0)
		alarm(camel(f.Name)+"ThrottlesAlarm", f.Name+"-throttles",
			"functions/"+f.Name+": any throttled invocation in 5 minutes (account or mapping concurrency)",
			fn.MetricThrottles(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}), 0)
	}
	throttles := tableThrottles(table, five)
	alarm("TableThrottlesAlarm", "dynamodb-throttles",
		"DynamoDB: any throttled read or write on the table or an index in 5 minutes (a hot key: see docs/ARCHITECTURE.md, where it goes next)",
		awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression:   jsii.String("SUM(METRICS())"),
			UsingMetrics: &throttles,
			Label:        jsii.String("throttle events"),
			Period:       five,
		}), 0)
	for _, name := range queue.Queues {
		alarm(camel(name)+"DlqAlarm", queue.DLQ(name)+"-depth",
			"SQS "+prefix+"-"+queue.DLQ(name)+": messages that failed "+fmt.Sprint(queue.MaxReceives)+" times; inspect and redrive",
			dlqs[name].MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Maximum")}), 0)
	}
	return topic
}

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
