package mail

import (
	"fmt"

	qrcode "github.com/skip2/go-qrcode"
)

// qrModulePixels is how many pixels wide a QR module is: whole pixels keep
// the code sharp when a mail client or the PDF scales it.
const qrModulePixels = 6

// qrPNG renders payload as a PNG QR code (medium error correction).
func qrPNG(payload string) ([]byte, error) {
	if payload == "" {
		return nil, fmt.Errorf("mail: a ticket without a QR payload")
	}
	png, err := qrcode.Encode(payload, qrcode.Medium, -qrModulePixels)
	if err != nil {
		return nil, fmt.Errorf("mail: QR code: %w", err)
	}
	return png, nil
}
