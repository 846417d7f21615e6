package emailrender_test

import (
	"testing"

	"tix/internal/emailrender"
	"tix/internal/emailsend/emailtest"
)

// BenchmarkRenderTickets renders a two-ticket order's email (QR PNGs, the PDF).
func BenchmarkRenderTickets(b *testing.B) {
	e := emailtest.SampleTickets("buyer@example.com", "ru")
	for b.Loop() {
		if _, err := emailrender.RenderTickets(e); err != nil {
			b.Fatal(err)
		}
	}
}
