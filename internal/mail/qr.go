package mail

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"sync"

	qrcode "github.com/skip2/go-qrcode"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// qrModulePixels is how many pixels wide a QR module is: whole pixels keep
// the code sharp when a mail client or the PDF scales it.
const qrModulePixels = 6

// qrPNG renders payload as a PNG QR code (medium error correction). A test
// code is framed in red with TEST above and below it, so no one takes it for
// a live ticket at a glance; the code itself still scans (its payload says
// it is a test).
func qrPNG(payload string, test bool) ([]byte, error) {
	if payload == "" {
		return nil, fmt.Errorf("mail: a ticket without a QR payload")
	}
	q, err := qrcode.New(payload, qrcode.Medium)
	if err != nil {
		return nil, fmt.Errorf("mail: QR code: %w", err)
	}
	if !test {
		return q.PNG(-qrModulePixels)
	}
	img, err := testFrame(q.Image(-qrModulePixels))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := png.Encode(&out, img); err != nil {
		return nil, fmt.Errorf("mail: QR code: %w", err)
	}
	return out.Bytes(), nil
}

// The test marking's colours: a light red frame (light enough that a
// scanner's binarizer sees it as the code's white surround) with TEST in a
// dark red.
var (
	testFrameColor = color.RGBA{R: 0xfe, G: 0xca, B: 0xca, A: 0xff}
	testTextColor  = color.RGBA{R: 0xb9, G: 0x1c, B: 0x1c, A: 0xff}
)

// testBand is the height of the red bands above and below a test code,
// testSide the width of the frame beside it.
const testBand, testSide = 64, 12

// testFrame draws code inside a red frame whose top and bottom bands say TEST.
func testFrame(code image.Image) (image.Image, error) {
	b := code.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx()+2*testSide, b.Dy()+2*testBand))
	draw.Draw(out, out.Bounds(), &image.Uniform{C: testFrameColor}, image.Point{}, draw.Src)
	draw.Draw(out, image.Rect(testSide, testBand, testSide+b.Dx(), testBand+b.Dy()), code, b.Min, draw.Src)
	face, err := testFace()
	if err != nil {
		return nil, err
	}
	d := font.Drawer{Dst: out, Src: &image.Uniform{C: testTextColor}, Face: face}
	w := d.MeasureString("TEST").Round()
	for _, top := range []int{0, testBand + b.Dy()} {
		d.Dot = fixed.P((out.Bounds().Dx()-w)/2, top+testBand-16)
		d.DrawString("TEST")
	}
	return out, nil
}

var testFace = sync.OnceValues(func() (font.Face, error) {
	f, err := opentype.Parse(gobold.TTF)
	if err != nil {
		return nil, fmt.Errorf("mail: TEST font: %w", err)
	}
	return opentype.NewFace(f, &opentype.FaceOptions{Size: 44, DPI: 72, Hinting: font.HintingFull})
})
