package store

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Index is one global secondary index of the table: string keys, all attributes projected.
type Index struct{ Name, PartitionKey, SortKey string }

// Schema is the one definition of the table: the local stack creates it from
// CreateTableInput and the CDK stack from the same fields, and a test checks both agree.
type Schema struct {
	PartitionKey, SortKey string
	Indexes               []Index
	// TTLAttribute holds a Unix-seconds expiry used only for housekeeping: reads and
	// conditions check explicit expiries, never rely on TTL deletion.
	TTLAttribute string
}

// Table is tix's single table.
var Table = Schema{
	PartitionKey: "PK",
	SortKey:      "SK",
	Indexes: []Index{
		{Name: "GSI1", PartitionKey: "GSI1PK", SortKey: "GSI1SK"},
		{Name: "GSI2", PartitionKey: "GSI2PK", SortKey: "GSI2SK"},
		{Name: "GSI3", PartitionKey: "GSI3PK", SortKey: "GSI3SK"},
	},
	TTLAttribute: "ttl",
}

// CreateTableInput is the on-demand table with its indexes.
func (s Schema) CreateTableInput(name string) *dynamodb.CreateTableInput {
	attrs := []types.AttributeDefinition{
		{AttributeName: aws.String(s.PartitionKey), AttributeType: types.ScalarAttributeTypeS},
		{AttributeName: aws.String(s.SortKey), AttributeType: types.ScalarAttributeTypeS},
	}
	var gsis []types.GlobalSecondaryIndex
	for _, ix := range s.Indexes {
		attrs = append(attrs,
			types.AttributeDefinition{AttributeName: aws.String(ix.PartitionKey), AttributeType: types.ScalarAttributeTypeS},
			types.AttributeDefinition{AttributeName: aws.String(ix.SortKey), AttributeType: types.ScalarAttributeTypeS})
		gsis = append(gsis, types.GlobalSecondaryIndex{
			IndexName: aws.String(ix.Name),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(ix.PartitionKey), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(ix.SortKey), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		})
	}
	return &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: attrs,
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(s.PartitionKey), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(s.SortKey), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: gsis,
	}
}
