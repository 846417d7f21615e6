# tix: the two commands a newcomer needs are `make run` and `make test`.
SHELL := /bin/bash
FUNCTIONS := $(notdir $(wildcard functions/*))
LDFLAGS := -s -w

STAGE ?= dev
CDK_ARGS ?=
CDK := scripts/node_modules/.bin/cdk
# Every cdk run: jsii (the Go CDK's Node bridge) warns loudly on Node 20; this silences it.
CDK_ENV := JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20

.PHONY: run test lint setup build tixctl clean stack-start stack-stop bench bench-orders bench-mail fuzz mutation load load-webhooks load-door load-queue onsale-model init-time synth deploy

run: setup ## start the local stack with demo data on http://127.0.0.1:8080/v1
	@scripts/run.sh

test: setup ## run every test against DynamoDB Local, fauxqs and MailDev
	@scripts/test.sh

lint: ## staticcheck and golangci-lint (pinned, installed into build/tools; .golangci.yml) over the root module and infra/
	@scripts/golint.sh

setup: ## install Java (apt) and the pinned emulators (npm ci in scripts/) if missing
	@scripts/setup.sh

build: ## cross-compile every Lambda to build/<name>/bootstrap (arm64, provided.al2023)
	@for f in $(FUNCTIONS); do \
		echo "==> Building functions/$$f (linux/arm64)"; \
		mkdir -p build/$$f; \
		GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='$(LDFLAGS)' -o build/$$f/bootstrap ./functions/$$f || exit 1; \
		ls -l build/$$f/bootstrap | awk '{printf "    %s: %.1f MB\n", $$NF, $$5/1048576}'; \
	done

synth: setup build ## CloudFormation template of stack tix-$(STAGE) (STAGE=dev|prod) into cdk.out/; offline, no AWS account
	@echo "==> cdk synth tix-$(STAGE) (offline: no context lookups, version check, notices or telemetry)"
	@$(CDK_ENV) CDK_DISABLE_VERSION_CHECK=1 AWS_EC2_METADATA_DISABLED=true \
		$(CDK) synth --context stage=$(STAGE) --no-version-reporting --no-notices --no-lookups --quiet $(CDK_ARGS) tix-$(STAGE)
	@echo "    wrote cdk.out/tix-$(STAGE).template.json"

# deploy needs AWS credentials and, once per account and region, `$(CDK) bootstrap`.
# ALARM_EMAIL=you@example.com subscribes an address to the alarm topic; CDK_ARGS
# passes more cdk options, e.g. CDK_ARGS="-c webhookKeyIds=k2,k1" (see infra/main.go).
deploy: setup build ## deploy stack tix-$(STAGE) with the AWS credentials of the shell (asks before IAM or security group changes)
	$(CDK_ENV) $(CDK) deploy --context stage=$(STAGE) $(if $(ALARM_EMAIL),--context alarmEmail=$(ALARM_EMAIL)) \
		--require-approval broadening $(CDK_ARGS) tix-$(STAGE)

tixctl: ## build the operator CLI to ./build/tixctl
	@go build -o build/tixctl ./scripts/tixctl && echo "built build/tixctl"

bench: setup ## catalog read benchmarks (request units, latency) against DynamoDB Local
	@TIX_STACK_SESSION=bench scripts/stack.sh start --memory; \
	TIX_TEST_DYNAMODB_ENDPOINT=http://127.0.0.1:$${TIX_DYNAMODB_PORT:-8000} go test -run '^$$' -bench . -benchtime 200x ./internal/api/... ; \
	TIX_STACK_SESSION=bench scripts/stack.sh stop

bench-orders: setup ## the dashboard's search by buyer email: one indexed query among BENCH_ORDERS (default 100,000) orders on DynamoDB Local, p50/p99 of BENCH_LOOKUPS lookups (fails over 300 ms)
	@TIX_STACK_SESSION=bench scripts/stack.sh start --memory; \
	TIX_TEST_DYNAMODB_ENDPOINT=http://127.0.0.1:$${TIX_DYNAMODB_PORT:-8000} go test -run '^$$' -bench OrdersByBuyer -benchtime 1x -timeout 30m ./internal/store/ ; rc=$$?; \
	TIX_STACK_SESSION=bench scripts/stack.sh stop; exit $$rc

bench-mail: setup ## email: render time of a two-ticket order, messages/s one SMTP sender pushes into MailDev
	@TIX_STACK_SESSION=bench scripts/stack.sh start --memory; \
	TIX_TEST_SMTP_ENDPOINT=127.0.0.1:$${TIX_SMTP_PORT:-1025} go test -run '^$$' -bench . -benchtime 300x ./internal/emailrender ./internal/emailsend ; \
	TIX_STACK_SESSION=bench scripts/stack.sh stop

load: setup ## load POST /orders on DynamoDB Local: p50/p99, orders/s and the share of the bare-transaction floor per client count, oversell check (ORDERS, CLIENTS, CAPACITY)
	@TIX_STACK_SESSION=load scripts/stack.sh start --memory; \
	go run ./scripts/load -orders $${ORDERS:-600} -clients $${CLIENTS:-1,4,16,32} -capacity $${CAPACITY:-400}; rc=$$?; \
	TIX_STACK_SESSION=load scripts/stack.sh stop; exit $$rc

load-webhooks: setup ## webhook delivery on the local stack: simulate-payment -> receiver p50/p99, deliveries/s of one deliver function, units per delivery
	@TIX_STACK_SESSION=load scripts/stack.sh start --memory; \
	go run ./scripts/webhookload -latency $${LATENCY:-200} -deliveries $${DELIVERIES:-1000}; rc=$$?; \
	TIX_STACK_SESSION=load scripts/stack.sh stop; exit $$rc

load-door: setup ## check-ins on the local stack: SCANNERS concurrent scanners POST /v1/check-ins over DynamoDB Local: check-ins/s, p50/p99, requests per check-in
	@TIX_STACK_SESSION=load scripts/stack.sh start --memory; \
	go run ./scripts/doorload -tickets $${TICKETS:-3000} -scanners $${SCANNERS:-64}; rc=$$?; \
	TIX_STACK_SESSION=load scripts/stack.sh stop; exit $$rc

load-queue: setup ## the waiting room on the local stack: VISITORS (default 20,000, at most 50,000) simulated visitors from loopback networks join, poll and hold: admission fairness, holds without an admission, p50/p99 of join and status (docs/waiting-room.md)
	@TIX_STACK_SESSION=load scripts/stack.sh start --memory; \
	go run ./scripts/queueload -visitors $${VISITORS:-20000}; rc=$$?; \
	TIX_STACK_SESSION=load scripts/stack.sh stop; exit $$rc

onsale-model: setup ## on-sale of one event on DynamoDB Local, metered by partition key: hot partitions and items at ORDER_RATE/READ_RATE, the whole system, the ceiling under the honest and the old rules (fails below 5,000 orders/s, 20,000 reads/s, 5,000 best-available seat holds/s or 20,000 queue joins/s honestly); TIX_STACK_SESSION and TIX_*_PORT choose the emulators
	@export TIX_STACK_SESSION=$${TIX_STACK_SESSION:-onsale}; scripts/stack.sh start --memory; \
	TIX_DYNAMODB_ENDPOINT=http://127.0.0.1:$${TIX_DYNAMODB_PORT:-8000} TIX_SQS_ENDPOINT=http://127.0.0.1:$${TIX_SQS_PORT:-4566} \
	go run ./scripts/onsale -orders $${ORDERS:-1000} -reads $${READS:-600} -holds $${HOLDS:-400} -joins $${JOINS:-1000} -join-rate $${JOIN_RATE:-20000} -order-rate $${ORDER_RATE:-5000} -read-rate $${READ_RATE:-20000} -hold-rate $${HOLD_RATE:-5000}; rc=$$?; \
	scripts/stack.sh stop; exit $$rc

init-time: setup ## start-up of each Lambda binary to its first answer via a fake Runtime API (p50/max of N starts, default 20) and its arm64 bootstrap size; fails when a function but deliver is over 11 MB
	@TIX_STACK_SESSION=init-time scripts/stack.sh start --memory; \
	go run ./scripts/lambdainit -n $${N:-20}; rc=$$?; \
	TIX_STACK_SESSION=init-time scripts/stack.sh stop; exit $$rc

mutation: ## mutation testing of internal/ticketing with its own tests (gremlins, pinned; not part of make test: minutes); MUTATION_ARGS=--money for the money paths only
	@scripts/mutation.sh $(MUTATION_ARGS)

fuzz: ## fuzz the cursor decoder and the catalog import (FUZZTIME each, default 60s; not part of make test)
	go test -run '^$$' -fuzz '^FuzzCursorDecode$$' -fuzztime $${FUZZTIME:-60s} ./internal/store
	go test -run '^$$' -fuzz '^FuzzParseCatalog$$' -fuzztime $${FUZZTIME:-60s} ./internal/catalogimport

clean: ## remove build output and local data
	rm -rf build .data cdk.out
