package ticketing

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"sync"
	"time"

	"tix/internal/clock"
	"tix/internal/ticketcode"
)

// TicketKeyStore keeps each organizer's ticket signing keys per environment
// (docs/door.md, "Keys").
type TicketKeyStore interface {
	// GetTicketKeys reads the key set (ErrNotFound when the organizer has none yet).
	GetTicketKeys(ctx context.Context, t Tenant) (*ticketcode.KeySet, error)
	// SaveTicketKeys writes ks: a new set when ks.Version is 0 (ErrStateChanged
	// when one exists), else conditional on ks.Version (ErrStateChanged when it
	// moved); it bumps ks.Version.
	SaveTicketKeys(ctx context.Context, ks *ticketcode.KeySet) error
}

// SecretBox seals secrets at rest (the webhook keyring's AES-GCM box,
// webhook.SecretBox): a value sealed for one aad opens only for it.
type SecretBox interface {
	Seal(plaintext, aad string) (string, error)
	Open(sealed, aad string) (string, error)
}

// DefaultTicketKeyOverlap is how long a retired ticket key still verifies
// (TIX_TICKET_KEY_OVERLAP).
const DefaultTicketKeyOverlap = 30 * 24 * time.Hour

// ticketKeyCacheTTL is how long a process signs and verifies from a key set
// it read: a rotation takes effect everywhere within it.
const ticketKeyCacheTTL = 30 * time.Second

// TicketKeys signs ticket codes with the organizer's key of the environment
// (made on first need) and gives the keys that verify them.
type TicketKeys struct {
	Store   TicketKeyStore
	Box     SecretBox
	Clock   clock.Clock
	Overlap time.Duration // a rotation's default overlap (0: DefaultTicketKeyOverlap)

	mu    sync.Mutex
	cache map[Tenant]cachedKeys
}

type cachedKeys struct {
	set   *ticketcode.KeySet
	priv  ed25519.PrivateKey // the signing key's private half, opened once
	until time.Time
}

// aad binds a sealed private key to its organizer, environment and kid.
func keyAAD(t Tenant, kid string) string {
	return "ticket-key:" + t.OrganizerID + ":" + string(t.Environment) + ":" + kid
}

// KeySet is the tenant's key set (made on first need), from the cache when fresh.
func (s *TicketKeys) KeySet(ctx context.Context, t Tenant) (*ticketcode.KeySet, error) {
	c, err := s.cached(ctx, t, false)
	if err != nil {
		return nil, err
	}
	return c.set, nil
}

// Refresh rereads the tenant's key set (a code named a kid the cache lacks).
func (s *TicketKeys) Refresh(ctx context.Context, t Tenant) (*ticketcode.KeySet, error) {
	c, err := s.cached(ctx, t, true)
	if err != nil {
		return nil, err
	}
	return c.set, nil
}

func (s *TicketKeys) cached(ctx context.Context, t Tenant, fresh bool) (cachedKeys, error) {
	now := time.Now() // the cache follows the wall clock, not the service clock tests may stop
	s.mu.Lock()
	c, ok := s.cache[t]
	s.mu.Unlock()
	if ok && !fresh && now.Before(c.until) {
		return c, nil
	}
	ks, err := s.ensure(ctx, t)
	if err != nil {
		return cachedKeys{}, err
	}
	c = cachedKeys{set: ks, until: now.Add(ticketKeyCacheTTL)}
	if k, ok := ks.Signing(); ok {
		if c.priv, err = s.open(t, k); err != nil {
			return cachedKeys{}, err
		}
	}
	s.mu.Lock()
	if s.cache == nil {
		s.cache = map[Tenant]cachedKeys{}
	}
	s.cache[t] = c
	s.mu.Unlock()
	return c, nil
}

// ensure reads the tenant's key set, making its first key when it has none.
func (s *TicketKeys) ensure(ctx context.Context, t Tenant) (*ticketcode.KeySet, error) {
	for range 3 {
		ks, err := s.Store.GetTicketKeys(ctx, t)
		if err == nil {
			return ks, nil
		}
		if !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		ks = &ticketcode.KeySet{OrganizerID: t.OrganizerID, Environment: string(t.Environment)}
		k, err := s.newKey(t)
		if err != nil {
			return nil, err
		}
		ks.Keys = []ticketcode.Key{k}
		if err := s.Store.SaveTicketKeys(ctx, ks); err == nil {
			return ks, nil
		} else if !errors.Is(err, ErrStateChanged) {
			return nil, err
		}
		// another process made the first key at the same time: read it
	}
	return nil, fmt.Errorf("ticket keys of %s/%s kept changing", t.OrganizerID, t.Environment)
}

func (s *TicketKeys) newKey(t Tenant) (ticketcode.Key, error) {
	k, priv := ticketcode.NewKey(s.Clock.Now())
	sealed, err := s.Box.Seal(base64.RawURLEncoding.EncodeToString(priv.Seed()), keyAAD(t, k.Kid))
	if err != nil {
		return ticketcode.Key{}, fmt.Errorf("seal ticket key: %w", err)
	}
	k.Sealed = sealed
	return k, nil
}

func (s *TicketKeys) open(t Tenant, k ticketcode.Key) (ed25519.PrivateKey, error) {
	plain, err := s.Box.Open(k.Sealed, keyAAD(t, k.Kid))
	if err != nil {
		return nil, fmt.Errorf("open ticket key %s: %w", k.Kid, err)
	}
	seed, err := base64.RawURLEncoding.DecodeString(plain)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("open ticket key %s: not an Ed25519 seed", k.Kid)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// Sign returns the code of claims signed by the tenant's signing key.
func (s *TicketKeys) Sign(ctx context.Context, t Tenant, c ticketcode.Claims) (string, error) {
	ck, err := s.cached(ctx, t, false)
	if err != nil {
		return "", err
	}
	k, ok := ck.set.Signing()
	if !ok {
		return "", fmt.Errorf("ticket keys of %s/%s have no signing key", t.OrganizerID, t.Environment)
	}
	return ticketcode.Sign(c, k.Kid, ck.priv)
}

// SignAdmissionPage signs a page of an admission list with the tenant's
// signing key (docs/door.md#the-admission-list).
func (s *TicketKeys) SignAdmissionPage(ctx context.Context, t Tenant, p *ticketcode.AdmissionPage) error {
	ck, err := s.cached(ctx, t, false)
	if err != nil {
		return err
	}
	k, ok := ck.set.Signing()
	if !ok {
		return fmt.Errorf("ticket keys of %s/%s have no signing key", t.OrganizerID, t.Environment)
	}
	return ticketcode.SignAdmissionPage(p, k.Kid, ck.priv)
}

// Rotate makes a new signing key for the tenant; the current one keeps
// verifying for overlap (0: the configured overlap). It returns the new set.
func (s *TicketKeys) Rotate(ctx context.Context, t Tenant, overlap time.Duration) (*ticketcode.KeySet, error) {
	if overlap < 0 {
		return nil, Invalid("overlap", "the overlap cannot be negative")
	}
	if overlap == 0 {
		overlap = s.overlap()
	}
	for range 3 {
		ks, err := s.ensure(ctx, t)
		if err != nil {
			return nil, err
		}
		k, err := s.newKey(t)
		if err != nil {
			return nil, err
		}
		ks.Rotate(k, s.Clock.Now().UTC(), overlap)
		err = s.Store.SaveTicketKeys(ctx, ks)
		if err == nil {
			s.mu.Lock()
			delete(s.cache, t)
			s.mu.Unlock()
			return ks, nil
		}
		if !errors.Is(err, ErrStateChanged) {
			return nil, err
		}
	}
	return nil, Errorf(CodeConflict, "the ticket keys of %s changed concurrently; retry", t.OrganizerID)
}

func (s *TicketKeys) overlap() time.Duration {
	if s.Overlap > 0 {
		return s.Overlap
	}
	return DefaultTicketKeyOverlap
}

// TicketCodes are the signed codes of a paid order: the order's (admits
// every ticket) and one per ticket number.
func (s *TicketKeys) TicketCodes(ctx context.Context, o *Order) (string, map[string]string, error) {
	t := Tenant{OrganizerID: o.OrganizerID, Environment: o.Environment}
	order, err := s.Sign(ctx, t, o.OrderClaims())
	if err != nil {
		return "", nil, err
	}
	codes := make(map[string]string, len(o.Tickets))
	for _, tk := range o.Tickets {
		if codes[tk.Number], err = s.Sign(ctx, t, o.TicketClaims(tk)); err != nil {
			return "", nil, err
		}
	}
	return order, codes, nil
}

// OrderClaims is what the order's code names: the order, its event and
// occurrence, its order-level number and every ticket's number.
func (o *Order) OrderClaims() ticketcode.Claims {
	numbers := make([]string, 0, len(o.Tickets))
	for _, tk := range o.Tickets {
		numbers = append(numbers, tk.Number)
	}
	return ticketcode.Claims{OrderID: o.ID, TicketNumber: o.TicketNumber, EventID: o.EventID, OccurrenceID: o.OccurrenceID,
		Quantity: max(o.Quantity, 1), Live: o.Environment == EnvLive, Tickets: numbers}
}

// TicketClaims is what one ticket's code names: its number, order, event,
// occurrence and seat.
func (o *Order) TicketClaims(tk Ticket) ticketcode.Claims {
	c := ticketcode.Claims{OrderID: o.ID, TicketNumber: tk.Number, EventID: o.EventID, OccurrenceID: o.OccurrenceID,
		Quantity: 1, Live: o.Environment == EnvLive}
	if tk.Seat != nil {
		c.SeatID = tk.Seat.SeatID
	}
	return c
}
