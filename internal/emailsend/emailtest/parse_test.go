package emailtest

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"testing"

	qr "github.com/skip2/go-qrcode"
)

// missedByTheFinder is a ticket payload whose sharp 6-pixel code ZXing's
// finder-pattern search does not find (one of about 0.8 % of payloads).
const missedByTheFinder = `{"v":1,"order_id":"ord_00000000000011751796","ticket_number":"TIX-001484","event_id":"evt_jazz","quantity":1,"livemode":false,"test":true}`

func TestDecodeQR_ReadsACodeTheFinderMisses(t *testing.T) {
	plain, err := qr.Encode(missedByTheFinder, qr.Medium, -6)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(plain))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeQR(img, nil); err == nil {
		t.Fatal("the finder now reads this code: pick another payload it misses, or the fallback is untested")
	}
	// The same code inside a coloured frame with dark red marks beside it, as
	// a test-mode ticket is drawn.
	b := img.Bounds()
	framed := image.NewRGBA(image.Rect(0, 0, b.Dx()+24, b.Dy()+128))
	draw.Draw(framed, framed.Bounds(), &image.Uniform{C: color.RGBA{R: 0xfe, G: 0xca, B: 0xca, A: 0xff}}, image.Point{}, draw.Src)
	draw.Draw(framed, image.Rect(12, 64, 12+b.Dx(), 64+b.Dy()), img, b.Min, draw.Src)
	draw.Draw(framed, image.Rect(40, 10, 120, 50), &image.Uniform{C: color.RGBA{R: 0xb9, G: 0x1c, B: 0x1c, A: 0xff}}, image.Point{}, draw.Src)
	var framedPNG bytes.Buffer
	if err := png.Encode(&framedPNG, framed); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"plain": plain, "framed": framedPNG.Bytes()} {
		got, err := DecodeQR(b)
		if err != nil || got != missedByTheFinder {
			t.Errorf("%s: DecodeQR = %q, %v; want the payload", name, got, err)
		}
	}
}
