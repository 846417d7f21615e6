package main

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"

	"tix/internal/queue"
)

// sesTypes are the resource types only a stage with mailFrom has.
var sesTypes = []string{"AWS::SES::ConfigurationSet", "AWS::SES::EmailIdentity", "AWS::SES::ConfigurationSetEventDestination"}

// TestMailResources: prod (mailFrom and mailIdentity) has the configuration
// set, the domain identity sending with it, bounces and complaints published
// to the events topic, which SES may publish to and which delivers raw to the
// deliveries queue; dev (no mailFrom) has none of it.
func TestMailResources(t *testing.T) {
	tm := tmpls[ProdStage]
	csID, _ := only(t, ProdStage, "AWS::SES::ConfigurationSet")
	topicID := topicIDs(t, ProdStage)["ses-events"]
	deliveries := queueIDs(t, ProdStage)[queue.DeliveriesQueue]
	if topicID == "" || deliveries == "" {
		t.Fatalf("prod: topics %v, queues %v: no ses-events topic or deliveries queue", topicIDs(t, ProdStage), queueIDs(t, ProdStage))
	}
	holds(t, "prod: configuration set with reputation metrics, sending, SES suppression of bounces and complaints", func() {
		tm.HasResourceProperties(jsii.String("AWS::SES::ConfigurationSet"), like(obj{
			"Name":               "tix-prod",
			"ReputationOptions":  obj{"ReputationMetricsEnabled": true},
			"SendingOptions":     obj{"SendingEnabled": true},
			"SuppressionOptions": obj{"SuppressedReasons": []any{"BOUNCE", "COMPLAINT"}},
		}))
	})
	holds(t, "prod: the domain identity, sending with the configuration set", func() {
		tm.HasResourceProperties(jsii.String("AWS::SES::EmailIdentity"), like(obj{
			"EmailIdentity":              prodMailIdentity,
			"ConfigurationSetAttributes": obj{"ConfigurationSetName": obj{"Ref": csID}},
		}))
	})
	holds(t, "prod: bounces and complaints to the topic", func() {
		tm.HasResourceProperties(jsii.String("AWS::SES::ConfigurationSetEventDestination"), like(obj{
			"ConfigurationSetName": obj{"Ref": csID},
			"EventDestination": obj{
				"Enabled":            true,
				"MatchingEventTypes": []any{"bounce", "complaint"},
				"SnsDestination":     obj{"TopicARN": obj{"Ref": topicID}},
			},
		}))
	})
	holds(t, "prod: the topic delivers raw to the deliveries queue", func() {
		tm.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), like(obj{
			"Protocol": "sqs", "TopicArn": obj{"Ref": topicID},
			"Endpoint":           obj{"Fn::GetAtt": []any{deliveries, "Arn"}},
			"RawMessageDelivery": true,
		}))
	})
	// SES may publish (this account's configuration set only); the queue
	// accepts this topic's messages.
	var sesPublish, snsSend bool
	for _, s := range statements(topicPolicy(t, ProdStage, topicID)) {
		cond, _ := s["Condition"].(map[string]any)["StringEquals"].(map[string]any)
		if s["Effect"] == "Allow" && principal(s) == "ses.amazonaws.com" && fmt.Sprint(s["Action"]) == "sns:Publish" &&
			flat(cond["AWS:SourceArn"]) == "arn:${AWS::Partition}:ses:${AWS::Region}:${AWS::AccountId}:configuration-set/${"+csID+"}" &&
			flat(cond["AWS:SourceAccount"]) == "${AWS::AccountId}" {
			sesPublish = true
		}
	}
	for _, pol := range resources(t, ProdStage, "AWS::SQS::QueuePolicy") {
		if len(list(props(pol)["Queues"])) != 1 || refID(list(props(pol)["Queues"])[0]) != deliveries {
			continue
		}
		for _, s := range statements(pol) {
			cond, _ := s["Condition"].(map[string]any)["ArnEquals"].(map[string]any)
			if s["Effect"] == "Allow" && principal(s) == "sns.amazonaws.com" && fmt.Sprint(s["Action"]) == "sqs:SendMessage" &&
				flat(cond["aws:SourceArn"]) == "${"+topicID+"}" {
				snsSend = true
			}
		}
	}
	if !sesPublish || !snsSend {
		t.Errorf("prod: SES may publish to the topic: %v; the topic may send to the deliveries queue: %v", sesPublish, snsSend)
	}
	// A domain identity: its three Easy DKIM CNAMEs are outputs.
	for i := 1; i <= 3; i++ {
		o, _ := templates[ProdStage]["Outputs"].(map[string]any)[fmt.Sprintf("MailDkimRecord%d", i)].(map[string]any)
		if v := flat(o["Value"]); !strings.Contains(v, "DkimDNSTokenName") || !strings.Contains(v, " CNAME ") {
			t.Errorf("prod: output MailDkimRecord%d = %v, want the identity's DKIM record", i, v)
		}
		if _, ok := templates["dev"]["Outputs"].(map[string]any)[fmt.Sprintf("MailDkimRecord%d", i)]; ok {
			t.Errorf("dev: has output MailDkimRecord%d", i)
		}
	}
	for _, typ := range sesTypes {
		holds(t, "dev: no "+typ, func() { tmpls["dev"].ResourceCountIs(jsii.String(typ), jsii.Number(0)) })
	}
	if ids := topicIDs(t, "dev"); len(ids) != 1 || ids["alarms"] == "" {
		t.Errorf("dev: topics %v, want the alarm topic only", ids)
	}
}

// TestMailEnvironment: with mailFrom every function sends through SES as
// that address with the configuration set; without it email is off.
func TestMailEnvironment(t *testing.T) {
	csID, _ := only(t, ProdStage, "AWS::SES::ConfigurationSet")
	want := map[string]map[string]any{
		"dev": {"TIX_MAIL_SENDER": "none", "TIX_MAIL_FROM": nil, "TIX_SES_CONFIGURATION_SET": nil},
		ProdStage: {"TIX_MAIL_SENDER": "ses", "TIX_MAIL_FROM": prodMailFrom,
			"TIX_SES_CONFIGURATION_SET": "${" + csID + "}"},
	}
	for _, stage := range stages {
		ids := functionIDs(t, stage)
		for _, f := range Functions {
			fn := templates[stage]["Resources"].(map[string]any)[ids[f.Name]].(map[string]any)
			vars := props(fn)["Environment"].(map[string]any)["Variables"].(map[string]any)
			for name, w := range want[stage] {
				var got any
				if v, ok := vars[name]; ok {
					got = flat(v)
				}
				if got != w {
					t.Errorf("%s %s: %s = %v, want %v", stage, f.Name, name, got, w)
				}
			}
		}
	}
}

// TestMailPermissions: only the function that sends (deliver) may call
// ses:SendEmail, as mailFrom only, on its identities and the configuration
// set; no function has any other SES action, and dev none at all.
func TestMailPermissions(t *testing.T) {
	csID, _ := only(t, ProdStage, "AWS::SES::ConfigurationSet")
	arn := "arn:${AWS::Partition}:ses:${AWS::Region}:${AWS::AccountId}:"
	wantRes := []string{arn + "configuration-set/${" + csID + "}", arn + "identity/tix.example", arn + "identity/tickets@tix.example"}
	sort.Strings(wantRes)
	senders := 0
	for _, stage := range stages {
		for _, f := range Functions {
			var ses []map[string]any
			for _, s := range roleStatements(t, stage, f.Name) {
				for _, a := range list(s["Action"]) {
					if strings.HasPrefix(a.(string), "ses:") {
						ses = append(ses, s)
						break
					}
				}
			}
			if stage != ProdStage || !f.Mails {
				if len(ses) > 0 {
					t.Errorf("%s %s: SES statements %v, want none", stage, f.Name, ses)
				}
				continue
			}
			senders++
			if len(ses) != 1 {
				t.Fatalf("%s %s: SES statements %v, want one", stage, f.Name, ses)
			}
			s := ses[0]
			var res []string
			for _, r := range list(s["Resource"]) {
				res = append(res, flat(r))
			}
			sort.Strings(res)
			cond, _ := s["Condition"].(map[string]any)["StringEquals"].(map[string]any)
			if fmt.Sprint(s["Action"]) != "ses:SendEmail" || !reflect.DeepEqual(res, wantRes) || cond["ses:FromAddress"] != prodMailFrom {
				t.Errorf("%s %s: %v on %v if %v, want ses:SendEmail on %v if ses:FromAddress = %s",
					stage, f.Name, s["Action"], res, s["Condition"], wantRes, prodMailFrom)
			}
		}
	}
	if senders != 1 {
		t.Errorf("%d functions send email, want 1 (deliver)", senders)
	}
}

// TestCheckMail: the context values accepted and refused.
func TestCheckMail(t *testing.T) {
	for _, c := range []struct {
		from, identity string
		identities     []string // nil: refused
	}{
		{"", "", []string{}},
		{"tickets@example.com", "", []string{"tickets@example.com", "example.com"}},
		{"tickets@example.com", "example.com", []string{"tickets@example.com", "example.com"}},
		{"tickets@example.com", "Tickets@Example.com", []string{"tickets@example.com", "example.com"}},
		{"tickets@mail.example.com", "example.com", []string{"tickets@mail.example.com", "mail.example.com", "example.com"}},
		{"", "example.com", nil},
		{"Tix <tickets@example.com>", "", nil},
		{"not an address", "", nil},
		{"tickets@localhost", "", nil},
		{"tickets@example.com", "other.example", nil},
		{"tickets@example.com", "xample.com", nil},
		{"tickets@example.com", "other@example.com", nil},
	} {
		m, err := checkMail(&TixStackProps{MailFrom: c.from, MailIdentity: c.identity})
		switch {
		case c.identities == nil && err == nil:
			t.Errorf("checkMail(%q, %q) accepted it: %+v", c.from, c.identity, m)
		case c.identities != nil && err != nil:
			t.Errorf("checkMail(%q, %q): %v", c.from, c.identity, err)
		case c.identities != nil && len(c.identities)+len(m.identities) > 0 && !reflect.DeepEqual(m.identities, c.identities):
			t.Errorf("checkMail(%q, %q): identities %v, want %v", c.from, c.identity, m.identities, c.identities)
		}
	}
	for _, name := range []string{"TIX_MAIL_SENDER", "TIX_MAIL_FROM", "TIX_SES_CONFIGURATION_SET"} {
		if err := CheckSettings(map[string]string{name: "x"}); err == nil || !strings.Contains(err.Error(), "mailFrom") {
			t.Errorf("settings %s: %v, want it refused for the context mailFrom", name, err)
		}
	}
}

// statements of a resource policy (queue or topic).
func statements(pol map[string]any) []map[string]any {
	var out []map[string]any
	for _, s := range props(pol)["PolicyDocument"].(map[string]any)["Statement"].([]any) {
		out = append(out, s.(map[string]any))
	}
	return out
}

// principal is a statement's service principal.
func principal(s map[string]any) string {
	p, _ := s["Principal"].(map[string]any)
	svc, _ := p["Service"].(string)
	return svc
}
