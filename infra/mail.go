package main

import (
	"fmt"
	"net/mail"
	"regexp"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsses"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/jsii-runtime-go"
)

// Email on AWS: Amazon SES, from the context mailFrom (the service's sending
// address) and mailIdentity (the SES identity to create, optional). Without
// mailFrom email is off (TIX_MAIL_SENDER=none) and nothing of SES is made.
// With it: a configuration set whose bounce and complaint events go to an SNS
// topic, subscribed to the deliveries queue with raw message delivery, where
// the deliver function puts the addresses on the suppression list.

// MailEvents are the SES events published to the topic: the ones that put an
// address on the suppression list (permanent bounces, complaints). Nothing
// else acts on the others.
var MailEvents = []awsses.EmailSendingEvent{awsses.EmailSendingEvent_BOUNCE, awsses.EmailSendingEvent_COMPLAINT}

// mailSetup is what checkMail settled: the sending address, the identity the
// stack creates ("" : the operator verified one already) and the identities
// the deliver function may send as (the address, its domain, and mailIdentity).
type mailSetup struct {
	from       string
	identity   string
	identities []string
}

var domainRe = regexp.MustCompile(`^(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$`)

// checkMail validates mailFrom (one plain address) and mailIdentity (that
// address, or a domain that mailFrom's domain is or is a subdomain of).
func checkMail(props *TixStackProps) (mailSetup, error) {
	from, ident := strings.TrimSpace(props.MailFrom), strings.ToLower(strings.TrimSpace(props.MailIdentity))
	if from == "" {
		if ident != "" {
			return mailSetup{}, fmt.Errorf("mailIdentity %q without mailFrom: set mailFrom, the address tix sends from", ident)
		}
		return mailSetup{}, nil
	}
	a, err := mail.ParseAddress(from)
	if err != nil || a.Name != "" || a.Address != from {
		return mailSetup{}, fmt.Errorf("mailFrom %q: want one plain address such as tickets@example.com", from)
	}
	_, domain, _ := strings.Cut(a.Address, "@")
	domain = strings.ToLower(domain)
	if !domainRe.MatchString(domain) {
		return mailSetup{}, fmt.Errorf("mailFrom %q: %q is not a domain SES can verify", from, domain)
	}
	m := mailSetup{from: a.Address, identity: ident, identities: []string{a.Address, domain}}
	switch {
	case ident == "" || ident == domain || strings.EqualFold(ident, a.Address):
	case domainRe.MatchString(ident) && strings.HasSuffix(domain, "."+ident):
		m.identities = append(m.identities, ident)
	default:
		return mailSetup{}, fmt.Errorf("mailIdentity %q: want mailFrom's address %q, its domain %q or a parent domain", ident, a.Address, domain)
	}
	return m, nil
}

// mail makes the SES resources and returns the functions' email environment:
// TIX_MAIL_SENDER=none without mailFrom.
func (b *build) mail(m mailSetup, deliveries awssqs.Queue) (env map[string]*string, configSet awsses.ConfigurationSet) {
	if m.from == "" {
		return map[string]*string{"TIX_MAIL_SENDER": jsii.String("none")}, nil
	}
	configSet = awsses.NewConfigurationSet(b.stack, jsii.String("MailConfigurationSet"), &awsses.ConfigurationSetProps{
		ConfigurationSetName: jsii.String(b.prefix),
		ReputationMetrics:    jsii.Bool(true), // bounce and complaint rates in CloudWatch
		SendingEnabled:       jsii.Bool(true),
		// SES's own suppression for this configuration set, beside tix's list.
		SuppressionReasons: awsses.SuppressionReasons_BOUNCES_AND_COMPLAINTS,
	})
	if m.identity != "" {
		id := awsses.Identity_Domain(jsii.String(m.identity))
		if strings.Contains(m.identity, "@") {
			id = awsses.Identity_Email(jsii.String(m.identity))
		}
		identity := awsses.NewEmailIdentity(b.stack, jsii.String("MailIdentity"), &awsses.EmailIdentityProps{
			Identity:         id,
			ConfigurationSet: configSet, // the default for mail from this identity
		})
		if !strings.Contains(m.identity, "@") {
			for i, r := range *identity.DkimRecords() {
				awscdk.NewCfnOutput(b.stack, jsii.String(fmt.Sprintf("MailDkimRecord%d", i+1)), &awscdk.CfnOutputProps{
					Value:       awscdk.Fn_Join(jsii.String(" CNAME "), &[]*string{r.Name, r.Value}),
					Description: jsii.String("Easy DKIM: publish this CNAME in " + m.identity + "'s DNS zone"),
				})
			}
		}
	}
	// No KMS key: SNS holds a notification only while it hands it to the
	// queue, which encrypts it at rest (SSE-SQS); a customer key would need a
	// key policy for SES. The topic policy (which CDK writes with SES's
	// publish statement, conditioned on this account and configuration set)
	// denies publishing without TLS.
	topic := awssns.NewTopic(b.stack, jsii.String("MailEvents"), &awssns.TopicProps{
		TopicName:   jsii.String(b.prefix + "-ses-events"),
		DisplayName: jsii.String("tix " + b.stage + " SES bounces and complaints"),
		EnforceSSL:  jsii.Bool(true),
	})
	configSet.AddEventDestination(jsii.String("MailEventsToTopic"), &awsses.ConfigurationSetEventDestinationOptions{
		ConfigurationSetEventDestinationName: jsii.String("bounces-complaints"),
		Destination:                          awsses.EventDestination_SnsTopic(topic),
		Events:                               &MailEvents,
		Enabled:                              jsii.Bool(true),
	})
	// Raw delivery: the queue gets SES's JSON itself (the consumer also
	// accepts the SNS envelope). The subscription adds a queue policy
	// statement letting this topic send; SSE-SQS needs no key grant.
	topic.AddSubscription(awssnssubscriptions.NewSqsSubscription(deliveries, &awssnssubscriptions.SqsSubscriptionProps{
		RawMessageDelivery: jsii.Bool(true),
	}))
	awscdk.NewCfnOutput(b.stack, jsii.String("MailConfigurationSetName"), &awscdk.CfnOutputProps{
		Value: configSet.ConfigurationSetName(), Description: jsii.String("SES configuration set every message is sent with"),
	})
	awscdk.NewCfnOutput(b.stack, jsii.String("MailEventsTopicArn"), &awscdk.CfnOutputProps{
		Value: topic.TopicArn(), Description: jsii.String("SNS topic of SES bounces and complaints (into the deliveries queue)"),
	})
	return map[string]*string{
		"TIX_MAIL_SENDER":           jsii.String("ses"),
		"TIX_MAIL_FROM":             jsii.String(m.from),
		"TIX_SES_CONFIGURATION_SET": configSet.ConfigurationSetName(),
	}, configSet
}

// allowSend lets the functions that send (Function.Mails) call SES v2
// SendEmail (raw content included: v2 has no SendRawEmail action) as mailFrom
// only, on its identities and the configuration set.
func (b *build) allowSend(m mailSetup, configSet awsses.ConfigurationSet, fns map[string]awslambda.Function) {
	if configSet == nil {
		return
	}
	arn := func(res string) *string {
		return jsii.String("arn:" + *b.stack.Partition() + ":ses:" + *b.stack.Region() + ":" + *b.stack.Account() + ":" + res)
	}
	resources := []*string{arn("configuration-set/" + *configSet.ConfigurationSetName())}
	for _, id := range m.identities {
		resources = append(resources, arn("identity/"+id))
	}
	for _, f := range Functions {
		if !f.Mails {
			continue
		}
		fns[f.Name].AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("SendEmail"),
			Actions:    jsii.Strings("ses:SendEmail"),
			Resources:  &resources,
			Conditions: &map[string]any{"StringEquals": map[string]any{"ses:FromAddress": m.from}},
		}))
	}
}
