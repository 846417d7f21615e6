package mail

import (
	"fmt"

	qrcode "github.com/skip2/go-qrcode"
)

// qrPNG renders payload as a size×size PNG QR code (medium error correction).
func qrPNG(payload string, size int) ([]byte, error) {
	if payload == "" {
		return nil, fmt.Errorf("mail: a ticket without a QR payload")
	}
	png, err := qrcode.Encode(payload, qrcode.Medium, size)
	if err != nil {
		return nil, fmt.Errorf("mail: QR code: %w", err)
	}
	return png, nil
}
