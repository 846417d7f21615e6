package waitroom

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"time"

	"tix/internal/ticketing"
)

// Challenge is a proof-of-work challenge: find a nonce (decimal digits)
// such that SHA-256(Token || Nonce) starts with Difficulty zero bits.
type Challenge struct {
	Token      string
	Difficulty int
	ExpiresAt  time.Time
}

type challengeClaims struct {
	ID    string `json:"i"`
	Event string `json:"e"`
	Bits  int    `json:"d"`
	Exp   int64  `json:"x"` // Unix ms
}

// NewChallenge returns a challenge for t's protected event: stateless (signed,
// nothing is written), at the event's difficulty.
func (s *Service) NewChallenge(ctx context.Context, t ticketing.Tenant, eventID string) (*Challenge, error) {
	p, err := s.Protection(ctx, t, eventID)
	if err != nil {
		return nil, err
	}
	exp := s.Clock.Now().Add(s.Settings.ChallengeTTL).Truncate(time.Millisecond)
	tok := s.sig.sign(kindChallenge, challengeClaims{ID: randomHex(12), Event: p.EventID, Bits: p.Difficulty, Exp: exp.UnixMilli()})
	return &Challenge{Token: tok, Difficulty: p.Difficulty, ExpiresAt: exp}, nil
}

// Solve finds the nonce of a challenge (the hosted page does the same in
// JavaScript with Web Crypto; tests and the load script call this).
func Solve(token string, difficulty int) string {
	for n := uint64(0); ; n++ {
		nonce := fmt.Sprint(n)
		if Solved(token, nonce, difficulty) {
			return nonce
		}
	}
}

// Solved reports whether nonce answers token at difficulty.
func Solved(token, nonce string, difficulty int) bool {
	sum := sha256.Sum256([]byte(token + nonce))
	return leadingZeroBits(sum[:]) >= difficulty
}

func leadingZeroBits(b []byte) int {
	n := 0
	for _, c := range b {
		if c != 0 {
			return n + bits.LeadingZeros8(c)
		}
		n += 8
	}
	return n
}

// Joined is a visitor's place in the queue.
type Joined struct {
	Token    string
	JoinedAt time.Time
	// BeforeOpening: the place is a random draw among everyone who joined
	// before the opening; after it, the place follows the join time.
	BeforeOpening bool
	OpensAt       time.Time
}

type queueClaims struct {
	ID     string `json:"i"`
	Event  string `json:"e"`
	Net    string `json:"n"`
	Bucket int    `json:"b"` // 0: before the opening; k: the k-th bucket after it
	Draw   uint32 `json:"r"` // the random draw of a join before the opening
	Join   int64  `json:"j"` // Unix ms
	Exp    int64  `json:"x"` // Unix ms
}

// Join checks the answer to a challenge and gives the visitor, on network
// ip, a place in t's event's queue: a signed token. Wrong, expired and
// reused answers are refused (an answer is recorded once).
func (s *Service) Join(ctx context.Context, t ticketing.Tenant, eventID, challenge, nonce, ip string) (*Joined, error) {
	p, err := s.Protection(ctx, t, eventID)
	if err != nil {
		return nil, err
	}
	var c challengeClaims
	now := s.Clock.Now()
	switch {
	case !s.sig.open(kindChallenge, challenge, &c) || c.Event != p.EventID:
		return nil, ticketing.Invalid("challenge", "challenge is not one this queue gave; get one from GET /v1/queue/%s/challenge", p.EventID)
	case now.UnixMilli() >= c.Exp:
		return nil, ticketing.Invalid("challenge", "the challenge expired; get a new one from GET /v1/queue/%s/challenge and answer it within %s", p.EventID, s.Settings.ChallengeTTL)
	case !validNonce(nonce) || !Solved(challenge, nonce, c.Bits):
		return nil, ticketing.Invalid("nonce", "nonce does not answer the challenge: SHA-256(challenge + nonce) must start with %d zero bits", c.Bits)
	}
	if err := s.Store.RecordAnswer(ctx, c.ID, time.UnixMilli(c.Exp)); err != nil {
		if errors.Is(err, ErrAnswerUsed) {
			return nil, ticketing.Errorf(ticketing.CodeConflict, "this challenge was answered already; get a new one from GET /v1/queue/%s/challenge", p.EventID)
		}
		return nil, err
	}
	q := queueClaims{ID: randomHex(12), Event: p.EventID, Net: Network(ip), Bucket: s.bucketOf(p, now), Join: now.UnixMilli()}
	if q.Bucket == 0 {
		q.Draw = randomUint32()
	}
	q.Exp = maxTime(now, p.OpensAt).Add(s.Settings.QueueTTL).UnixMilli()
	if err := s.Store.CountJoin(ctx, p.EventID, int(randomUint32()%uint32(s.Settings.Shards)), q.Bucket, time.UnixMilli(q.Exp)); err != nil {
		return nil, err
	}
	return &Joined{Token: s.sig.sign(kindQueue, q), JoinedAt: now, BeforeOpening: q.Bucket == 0, OpensAt: p.OpensAt}, nil
}

func validNonce(n string) bool {
	if n == "" || len(n) > 20 {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}

// bucketOf is the join-time bucket of now: 0 before the opening, then 1, 2...
// per Settings.Bucket.
func (s *Service) bucketOf(p *Protection, now time.Time) int {
	if now.Before(p.OpensAt) {
		return 0
	}
	return 1 + int(now.Sub(p.OpensAt)/s.Settings.Bucket)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func randomUint32() uint32 {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return binary.BigEndian.Uint32(b[:])
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
