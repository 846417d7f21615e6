package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/jsii-runtime-go"
)

// prepareNodeEnv fixes the environment of jsii's Node process, which the CDK
// packages prepare while they initialise (before main), with the environment
// of that moment: when it needs a change, the variables are set and the
// unstarted process is closed, so that the first CDK call starts one that
// sees them.
//   - JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION=20 turns off jsii's Node 20
//     end-of-life banner when the caller did not.
//   - cliPathVars: the cdk CLI runs in the repository (cdk.json) and passes
//     the output directory and the files in it relative to there; this app
//     runs in infra/, so each is made absolute.
func prepareNodeEnv() {
	changed := false
	const silence = "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"
	if os.Getenv(silence) == "" {
		_ = os.Setenv(silence, "20") // a valid name: it cannot fail
		changed = true
	}
	for _, name := range cliPathVars {
		if p := os.Getenv(name); p != "" && !filepath.IsAbs(p) {
			_ = os.Setenv(name, filepath.Join(repoRoot(), p))
			changed = true
		}
	}
	if changed {
		jsii.Close()
	}
}

// cliPathVars are the paths the cdk CLI (aws-cdk lib/cxapp/exec.js) hands the
// app, relative to where it runs when cdk.json's "output" is: the cloud
// assembly directory, the file an error is reported in, and the file
// aws-cdk-lib writes its performance counters to when a synthesis takes
// @aws-cdk/core.slowSynthThreshold or longer (10 s by default).
var cliPathVars = []string{"CDK_OUTDIR", "CDK_ERROR_FILE", "CDK_PERF_COUNTERS_FILE"}

// jsiiExitNoise is printed (without a newline) by jsii-runtime-go v1.139.0
// when jsii.Close wins a race between two goroutines waiting for the Node
// process's exit: the process ended normally.
const jsiiExitNoise = "Runtime process exited abnormally: waitid: no child processes"

// quietJSIIExit routes os.Stderr through a filter that drops jsiiExitNoise and
// returns the function that closes jsii and flushes the filter. Call it before
// the first CDK call (which starts the goroutine that prints the message, so
// it sees the new os.Stderr), and call the returned function last.
func quietJSIIExit() (closeJSII func()) {
	r, w, err := os.Pipe()
	if err != nil {
		return jsii.Close
	}
	stderr := os.Stderr
	os.Stderr = w
	done := make(chan struct{})
	go func() {
		defer close(done)
		br := bufio.NewReader(r)
		for {
			line, err := br.ReadString('\n')
			if line = strings.ReplaceAll(line, jsiiExitNoise, ""); line != "" {
				_, _ = stderr.WriteString(line)
			}
			if err != nil {
				return
			}
		}
	}()
	return func() {
		jsii.Close()
		// os.Stderr stays the closed pipe: a message printed after this (the
		// race may print once Close has returned) fails to write and is dropped.
		_ = w.Close()
		<-done
	}
}
