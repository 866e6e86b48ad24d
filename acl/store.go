package acl

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/sediment-io/sediment/metadata"
)

// Change is one ACL change, for the audit log: a binding created or
// deleted, and the principal that asked.
type Change struct {
	Action  string // "create" or "delete"
	By      string // the requesting principal
	Binding Binding
}

// Audit receives every ACL change once it is durable.
type Audit func(Change)

// LogAudit returns an Audit that writes one line per change to log. A
// binding holds no secret, so the line holds all of it.
func LogAudit(log *slog.Logger) Audit {
	return func(c Change) {
		log.Info("acl change", "action", c.Action, "by", c.By, "binding", c.Binding.String())
	}
}

// Store keeps bindings in the metadata store: CreateAcls and DeleteAcls
// write through it, brokers load from it.
type Store struct {
	md    *metadata.Store
	audit Audit
}

// NewStore returns a Store over md that reports every change to audit
// (nil: none).
func NewStore(md *metadata.Store, audit Audit) *Store {
	if audit == nil {
		audit = func(Change) {}
	}
	return &Store{md: md, audit: audit}
}

// Load returns every stored binding and the revision they are as of.
func (s *Store) Load(ctx context.Context) ([]Binding, int64, error) {
	snap, err := s.md.LoadACLs(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("acl: load: %w", err)
	}
	out := make([]Binding, len(snap.ACLs))
	for i, r := range snap.ACLs {
		out[i] = fromRecord(r)
	}
	return out, snap.Revision, nil
}

// Describe returns the stored bindings that match f, as DescribeAcls
// answers; an invalid filter is kerr.InvalidRequest.
func (s *Store) Describe(ctx context.Context, f Filter) ([]Binding, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	all, _, err := s.Load(ctx)
	if err != nil {
		return nil, err
	}
	var out []Binding
	for _, b := range all {
		if f.Matches(b) {
			out = append(out, b)
		}
	}
	return out, nil
}

// Revision returns the stored ACLs' revision, one cheap read: a broker
// reloads when it differs from its Authorizer's.
func (s *Store) Revision(ctx context.Context) (int64, error) {
	return s.md.ACLRevision(ctx)
}

// Create validates and stores bindings as CreateAcls does, and returns
// one result per binding: nil, or an error wrapping the Kafka error code
// for it (kerr.InvalidRequest for a bad binding, kerr.UnknownServerError
// for a storage failure). A binding already stored succeeds again without
// a change.
func (s *Store) Create(ctx context.Context, by string, bindings []Binding) []error {
	errs := make([]error, len(bindings))
	var recs []metadata.ACLRecord
	var at []int
	for i, b := range bindings {
		if errs[i] = b.Validate(); errs[i] == nil {
			recs = append(recs, toRecord(b))
			at = append(at, i)
		}
	}
	if len(recs) == 0 {
		return errs
	}
	stored, added, err := s.md.CreateACLs(ctx, recs)
	for _, r := range added {
		s.audit(Change{Action: "create", By: by, Binding: fromRecord(r)})
	}
	if err != nil {
		for _, i := range at[stored:] {
			errs[i] = fmt.Errorf("acl: create %s: %w: %w", bindings[i], err, kerr.UnknownServerError)
		}
	}
	return errs
}

// DeleteResult is one filter's outcome of Delete: the bindings it
// matched and that are now deleted, or an error wrapping a Kafka code.
type DeleteResult struct {
	Deleted []Binding
	Err     error
}

// Delete removes every binding that matches one of filters, as DeleteAcls
// does: a binding matched by several filters is deleted once and listed in
// each one's result; an invalid filter gets kerr.InvalidRequest and
// deletes nothing.
func (s *Store) Delete(ctx context.Context, by string, filters []Filter) []DeleteResult {
	res := make([]DeleteResult, len(filters))
	var valid []int
	for i, f := range filters {
		if res[i].Err = f.Validate(); res[i].Err == nil {
			valid = append(valid, i)
		}
	}
	if len(valid) == 0 {
		return res
	}
	deleted, err := s.md.DeleteACLs(ctx, func(r metadata.ACLRecord) bool {
		b := fromRecord(r)
		for _, i := range valid {
			if filters[i].Matches(b) {
				return true
			}
		}
		return false
	})
	for _, r := range deleted {
		b := fromRecord(r)
		s.audit(Change{Action: "delete", By: by, Binding: b})
		for _, i := range valid {
			if filters[i].Matches(b) {
				res[i].Deleted = append(res[i].Deleted, b)
			}
		}
	}
	if err != nil {
		for _, i := range valid {
			res[i].Err = fmt.Errorf("acl: delete: %w: %w", err, kerr.UnknownServerError)
		}
	}
	return res
}

func toRecord(b Binding) metadata.ACLRecord {
	return metadata.ACLRecord{ResourceType: int8(b.Type), ResourceName: b.Name, PatternType: int8(b.PatternType),
		Principal: b.Principal, Host: b.Host, Operation: int8(b.Operation), Permission: int8(b.Permission)}
}

func fromRecord(r metadata.ACLRecord) Binding {
	return Binding{
		Pattern: Pattern{Type: ResourceType(r.ResourceType), Name: r.ResourceName, PatternType: PatternType(r.PatternType)},
		Entry: Entry{Principal: r.Principal, Host: r.Host, Operation: Operation(r.Operation),
			Permission: Permission(r.Permission)},
	}
}
