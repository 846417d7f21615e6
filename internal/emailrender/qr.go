package emailrender

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"

	qrcode "github.com/skip2/go-qrcode"
	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
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
	var out bytes.Buffer
	if err := png.Encode(&out, testFrame(q.Image(-qrModulePixels))); err != nil {
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
func testFrame(code image.Image) image.Image {
	b := code.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx()+2*testSide, b.Dy()+2*testBand))
	draw.Draw(out, out.Bounds(), &image.Uniform{C: testFrameColor}, image.Point{}, draw.Src)
	draw.Draw(out, image.Rect(testSide, testBand, testSide+b.Dx(), testBand+b.Dy()), code, b.Min, draw.Src)
	word := testWord()
	w, h := word.Bounds().Dx()*testScale, word.Bounds().Dy()*testScale
	for _, top := range []int{0, testBand + b.Dy()} {
		x0, y0 := (out.Bounds().Dx()-w)/2, top+(testBand-h)/2
		for y := range h {
			for x := range w {
				if _, _, _, a := word.At(x/testScale, y/testScale).RGBA(); a > 0x8000 {
					out.Set(x0+x, y0+y, testTextColor)
				}
			}
		}
	}
	return out
}

// testScale is how many pixels wide a pixel of the TEST word's font is.
const testScale = 4

// testWord is TEST in the basic 7x13 bitmap font (opaque where inked).
func testWord() *image.Alpha {
	face := basicfont.Face7x13
	img := image.NewAlpha(image.Rect(0, 0, 4*face.Advance, face.Height))
	d := font.Drawer{Dst: img, Src: image.Opaque, Face: face, Dot: fixed.P(0, face.Ascent)}
	d.DrawString("TEST")
	return img
}
