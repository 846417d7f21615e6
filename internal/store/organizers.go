package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"tix/internal/ticketing"
)

type organizerItem struct {
	PK, SK, GSI1PK, GSI1SK string
	ticketing.Organizer
}

// CreateOrganizer stores a new organizer; its id must be unique.
func (s *Organizers) CreateOrganizer(ctx context.Context, o ticketing.Organizer) error {
	item, err := marshal(organizerItem{
		PK: orgPK(o.ID), SK: skOrganizer, GSI1PK: orgListPK, GSI1SK: sortTime(o.CreatedAt) + "#" + o.ID, Organizer: o,
	})
	if err != nil {
		return fmt.Errorf("marshal organizer %s: %w", o.ID, err)
	}
	_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: item,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if _, ok := isConditionFailed(err); ok {
		return ticketing.Errorf(ticketing.CodeConflict, "organizer %s already exists", o.ID)
	}
	if err != nil {
		return fmt.Errorf("put organizer %s: %w", o.ID, err)
	}
	return nil
}

// GetOrganizer reads one organizer; a missing one is not_found.
func (s *Organizers) GetOrganizer(ctx context.Context, id string) (*ticketing.Organizer, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: keyOf(orgPK(id), skOrganizer), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("get organizer %s: %w", id, err)
	}
	if out.Item == nil {
		return nil, ticketing.NotFound("organizer " + id)
	}
	var it organizerItem
	if err := unmarshal(out.Item, &it); err != nil {
		return nil, fmt.Errorf("decode organizer %s: %w", id, err)
	}
	return &it.Organizer, nil
}

// SetOrganizerVerified marks an organizer verified (or not); live keys require it.
func (s *Organizers) SetOrganizerVerified(ctx context.Context, id string, verified bool) (*ticketing.Organizer, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table), Key: keyOf(orgPK(id), skOrganizer),
		UpdateExpression:          aws.String("SET verified = :v"),
		ConditionExpression:       aws.String("attribute_exists(PK)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": &types.AttributeValueMemberBOOL{Value: verified}},
		ReturnValues:              types.ReturnValueAllNew,
	})
	if _, ok := isConditionFailed(err); ok {
		return nil, ticketing.NotFound("organizer " + id)
	}
	if err != nil {
		return nil, fmt.Errorf("verify organizer %s: %w", id, err)
	}
	var it organizerItem
	if err := unmarshal(out.Attributes, &it); err != nil {
		return nil, fmt.Errorf("decode organizer %s: %w", id, err)
	}
	return &it.Organizer, nil
}

// ListOrganizers returns every organizer, oldest first (operator tool only).
func (s *Organizers) ListOrganizers(ctx context.Context) ([]ticketing.Organizer, error) {
	var res []ticketing.Organizer
	p := dynamodb.NewQueryPaginator(s.db, &dynamodb.QueryInput{
		TableName: aws.String(s.table), IndexName: aws.String("GSI1"),
		KeyConditionExpression:    aws.String("GSI1PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s2(orgListPK)},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list organizers: %w", err)
		}
		for _, item := range page.Items {
			var it organizerItem
			if err := unmarshal(item, &it); err != nil {
				return nil, fmt.Errorf("decode organizer: %w", err)
			}
			res = append(res, it.Organizer)
		}
	}
	return res, nil
}

func s2(v string) types.AttributeValue { return str(v) }
