package tbanksim

import (
	"fmt"
	"strconv"

	"tix/internal/payment"
)

// tbankMember is T-Bank's SBP member id, which its payment links name.
const tbankMember = "100000000004"

// sbpID is a 32-character NSPK-style payment id: "AD1" (a dynamic link's
// kind) and the simulator's sequence, zero-padded.
func sbpID(n int64) string {
	return fmt.Sprintf("AD1%029d", n)
}

// qrLink is the payment's SBP link in NSPK's format, with the crc real links
// carry: CRC-16/CCITT-FALSE of everything before "&crc=".
func qrLink(id string, kopecks int64) string {
	s := "https://qr.nspk.ru/" + id + "?type=02&bank=" + tbankMember + "&sum=" + strconv.FormatInt(kopecks, 10) + "&cur=RUB"
	return s + "&crc=" + payment.NSPKChecksum(s)
}
