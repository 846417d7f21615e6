package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"tix/internal/ticketing"
)

// ScanLogged reports whether the uploaded scan clientScanID is recorded,
// and SupersededLogged whether the admission checkInID is recorded as
// superseded by an earlier scan (checkin_offline.go).
func (s *Store) ScanLogged(ctx context.Context, t ticketing.Tenant, clientScanID string) (bool, error) {
	return s.exists(ctx, scanLogPK(string(t.Environment), t.OrganizerID, clientScanID))
}

func (s *Store) SupersededLogged(ctx context.Context, t ticketing.Tenant, checkInID string) (bool, error) {
	return s.exists(ctx, supersededPK(string(t.Environment), t.OrganizerID, checkInID))
}

func (s *Store) exists(ctx context.Context, pk string) (bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: keyOf(pk, skScanLog), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, err
	}
	return len(out.Item) > 0, nil
}
