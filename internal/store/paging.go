package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DefaultListBudget is how many items one listing request examines at most
// (read from the index, before its filters; never fewer than a page and one). A listing whose filters match
// little stops there and answers with what it found (maybe nothing), has_more
// and a cursor that resumes after the last item examined, instead of reading
// the whole partition in one request.
const DefaultListBudget = 500

// SetListBudget changes how many items one listing request examines at most
// (n <= 0: DefaultListBudget). Tests use a small one.
func (s *DB) SetListBudget(n int) { s.listBudget = n }

func (s *core) budget() int {
	if s.listBudget <= 0 {
		return DefaultListBudget
	}
	return s.listBudget
}

// listed is what a bounded listing read: the matching items (up to want)
// and, when it stopped on its budget before finding want items, the key to
// resume after (the last item examined).
type listed struct {
	items  []map[string]types.AttributeValue
	resume map[string]types.AttributeValue
}

// queryBounded runs in (from start) until it has want matching items, the
// index ends, or it has examined the budget; readAhead is how many items to
// ask for per request given how many are still wanted (filters drop items
// after the read).
func (s *Catalog) queryBounded(ctx context.Context, op string, in *dynamodb.QueryInput, start map[string]types.AttributeValue,
	want int, readAhead func(missing int) int) (listed, error) {
	var res listed
	examined, budget := 0, max(s.budget(), want) // a page of matches is never cut short
	for {
		in.ExclusiveStartKey = start
		in.Limit = aws.Int32(int32(max(1, min(readAhead(want-len(res.items)), budget-examined))))
		in.ReturnConsumedCapacity = s.rcc()
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return listed{}, err
		}
		s.record(op, out.ConsumedCapacity)
		examined += int(out.ScannedCount)
		res.items = append(res.items, out.Items...)
		if len(res.items) >= want || out.LastEvaluatedKey == nil {
			return res, nil
		}
		start = out.LastEvaluatedKey
		if examined >= budget {
			res.resume = start
			return res, nil
		}
	}
}

// exact asks for the missing items only: a listing without filters.
func exact(missing int) int { return missing }

// ahead reads four times what is missing (50 to 500): a filtered listing
// usually fills its page in one request.
func ahead(missing int) int { return min(max(4*missing, 50), 500) }

// cut turns what a bounded listing read (up to one more than the page) into
// the page's items and, when another page follows, its cursor: after the
// page's last item (keyed on the table's and the index's keys), or where the
// budget stopped the read. next is "" on the last page.
func (s *Catalog) cut(res listed, limit int, pkName, skName, fingerprint string) (items []map[string]types.AttributeValue, next string) {
	items = res.items
	switch {
	case len(items) > limit:
		items = items[:limit]
		last := items[len(items)-1]
		next = s.cursor.encode(map[string]types.AttributeValue{
			"PK": last["PK"], "SK": last["SK"], pkName: last[pkName], skName: last[skName],
		}, fingerprint)
	case res.resume != nil:
		next = s.cursor.encode(res.resume, fingerprint)
	}
	return items, next
}
