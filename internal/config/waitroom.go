package config

import (
	"fmt"
	"time"
)

// Waitroom is the waiting room's defaults (TIX_WAITROOM_*; docs/waiting-room.md).
// Its tokens are signed with a key derived from TIX_CURSOR_SECRET.
type Waitroom struct {
	Difficulty   int           // TIX_WAITROOM_DIFFICULTY: proof-of-work leading zero bits
	Rate         int           // TIX_WAITROOM_RATE: admissions per second
	ChallengeTTL time.Duration // TIX_WAITROOM_CHALLENGE_TTL
	AdmissionTTL time.Duration // TIX_WAITROOM_ADMISSION_TTL
}

// maxDifficulty bounds TIX_WAITROOM_DIFFICULTY (waitroom.MaxDifficulty: a
// browser finds 30 bits in hours).
const maxDifficulty = 30

func (r *reader) waitroom() Waitroom {
	w := Waitroom{Difficulty: r.posInt("TIX_WAITROOM_DIFFICULTY"), Rate: r.posInt("TIX_WAITROOM_RATE"),
		ChallengeTTL: r.dur("TIX_WAITROOM_CHALLENGE_TTL"), AdmissionTTL: r.dur("TIX_WAITROOM_ADMISSION_TTL")}
	if w.Difficulty > maxDifficulty {
		r.errs = append(r.errs, fmt.Errorf("TIX_WAITROOM_DIFFICULTY=%d: at most %d bits", w.Difficulty, maxDifficulty))
	}
	return w
}
