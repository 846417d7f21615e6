// Command local is the all-in-one local runner behind `make run`: every endpoint
// group in one process on 127.0.0.1:8080, against DynamoDB Local and fauxqs.
// Only this main differs from the Lambdas; the handlers are the same.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"tix/internal/apidocs"
	"tix/internal/app"
	"tix/internal/app/sending"
	"tix/internal/config"
	"tix/internal/demo"
	"tix/internal/queue"
)

// localDefaults point the service at the emulators unless the environment says otherwise.
var localDefaults = map[string]string{
	"TIX_DYNAMODB_ENDPOINT": "http://127.0.0.1:8000",
	"TIX_SQS_ENDPOINT":      "http://127.0.0.1:4566",
	"TIX_CURSOR_SECRET":     "local-only-cursor-secret-do-not-use-in-aws",
	"TIX_LOG_FORMAT":        "text",
	"TIX_ADDR":              "127.0.0.1:8080",
	"TIX_WEBHOOK_KEYRING":   config.LocalKeyring,
	"TIX_DATA_DIR":          ".data",
	"TIX_MAIL_SENDER":       "smtp", // MailDev, which scripts/stack.sh starts
	"TIX_MAIL_FROM":         "tickets@tix.localhost",
	"TIX_MAILDEV_URL":       "http://127.0.0.1:1080",
}

// deliveryConsumers is how many deliveries-queue consumers the runner runs.
const deliveryConsumers = 4

func getenv(name string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return localDefaults[name]
}

func step(format string, args ...any) { fmt.Printf("==> "+format+"\n", args...) }

// prepare creates the table and queues when absent, seeds the demo catalog
// once, and returns the demo keys and the demo owner's dashboard sign-in.
func prepare(ctx context.Context, a *app.App, sim *simulator) ([]demoKey, demoOwner, error) {
	cfg := a.Config
	step("Creating table %s if absent (DynamoDB Local at %s)", cfg.Table, cfg.DynamoDBEndpoint)
	created, err := a.Store.EnsureTable(ctx)
	if err != nil {
		return nil, demoOwner{}, fmt.Errorf("%w\n(is DynamoDB Local running? `make run` starts it)", err)
	}
	if !created {
		step("Table %s exists; reusing it", cfg.Table)
	}
	step("Creating queues if absent (fauxqs at %s)", cfg.SQSEndpoint)
	if _, err := a.Queue.EnsureQueues(ctx); err != nil {
		return nil, demoOwner{}, fmt.Errorf("%w\n(is fauxqs running? `make run` starts it)", err)
	}
	step("Seeding the demo catalog (once)")
	_, err = demo.Seed(ctx, a.Store, time.Now().UTC())
	if err != nil {
		return nil, demoOwner{}, fmt.Errorf("seed demo data: %w", err)
	}
	if sim != nil {
		if err := connectDemo(ctx, a, sim); err != nil {
			return nil, demoOwner{}, err
		}
	}
	keys, err := ensureDemoKeys(ctx, a.Store, getenv("TIX_DATA_DIR"), sim != nil)
	if err != nil {
		return nil, demoOwner{}, fmt.Errorf("demo keys: %w", err)
	}
	owner, err := ensureDemoOwner(ctx, a.Store.Accounts(), getenv("TIX_DATA_DIR"))
	if err != nil {
		return nil, owner, fmt.Errorf("demo dashboard owner: %w", err)
	}
	return keys, owner, nil
}

// startWorkers runs until ctx ends what the AWS stack runs beside the API:
// the timers and deliveries consumers and the sweep.
func startWorkers(ctx context.Context, a *app.App) {
	cfg := a.Config
	// The timers queue: order expiry and refund settlement, as functions/timers does on AWS.
	go func() {
		err := a.Queue.Consume(ctx, queue.TimersQueue, func(ctx context.Context, m queue.Message) error {
			return a.HandleTimerMessage(ctx, m.Body)
		})
		if err != nil && ctx.Err() == nil {
			slog.Error("timers consumer stopped", "error", err)
		}
	}()
	// The deliveries queue, as functions/deliver does on AWS: several
	// consumers, so that one slow receiver does not hold the others back.
	for range deliveryConsumers {
		go func() {
			err := a.Queue.Consume(ctx, queue.DeliveriesQueue, func(ctx context.Context, m queue.Message) error {
				return a.HandleDeliveryMessage(ctx, m.Body)
			})
			if err != nil && ctx.Err() == nil {
				slog.Error("deliveries consumer stopped", "error", err)
			}
		}()
	}
	// The sweep, as the EventBridge schedule runs functions/timers on AWS.
	go func() {
		t := time.NewTicker(cfg.Webhooks.SweepInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := a.Sweep(ctx); err != nil && ctx.Err() == nil {
					slog.Error("sweep", "error", err)
				}
			}
		}
	}()
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "\nerror: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	deriveDefaults()
	cfg, err := config.Load(getenv)
	if err != nil {
		return err
	}
	app.Logger(cfg)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	sim, err := startSimulator(cfg.Payments.TBankURL)
	if err != nil {
		return err
	}
	defer func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		sim.stop(shutdown)
	}()

	scanSim, err := startScanSim(cfg.SecretScanning.KeysURL, getenv("TIX_ADDR"))
	if err != nil {
		return err
	}
	if scanSim != nil {
		defer func() { _ = scanSim.Close() }()
	}

	a, err := sending.New(ctx, cfg, nil)
	if err != nil {
		return err
	}
	app.EnableSecretScanning(a)                // POST /v1/secret-scanning/github
	app.AllowLoopbackWebhooks(a.Webhooks, cfg) // the local stack: receivers on this machine
	keys, owner, err := prepare(ctx, a, sim)
	if err != nil {
		return err
	}

	addr := getenv("TIX_ADDR")
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("serve on %s: %w (is another `make run` already using the port? set TIX_ADDR to change it)", addr, err)
	}
	a.Server.Docs = apidocs.Redoc() // GET /v1/docs
	srv := newHTTPServer(withDashboard(a, a.Server.Handler()), readTimeout)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(envelopeListener{ln}) }()
	startWorkers(ctx, a)
	printWelcome(cfg, addr, keys, owner, sim)
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	step("Stopping")
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		slog.Warn("shutdown", "error", err)
	}
	return nil
}
