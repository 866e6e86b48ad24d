// Package resttest serves the Iceberg REST catalog spec for tests: the
// config, OAuth2 token, namespace and table endpoints a writer uses, in
// front of iceberg-go's SQL catalog on SQLite, on a loopback port. It is
// our own server, not Polaris, Nessie or Lakekeeper: none of those runs
// here without containers or a JVM.
package resttest

import (
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"
	icebergcatalog "github.com/apache/iceberg-go/catalog"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	"github.com/apache/iceberg-go/table"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// Server is a running REST catalog.
type Server struct {
	// URL is the catalog's base URL, http://127.0.0.1:PORT/PREFIX.
	URL string

	backing *sqlcat.Catalog
	token   string // when set, every request must carry "Bearer token"
	secret  string // the OAuth2 client credential that /v1/oauth/tokens trades for token

	mu        sync.Mutex // guards warehouses
	warehouse []string   // warehouse= of each /v1/config request
}

// Start serves the spec under prefix on a loopback port until the test
// ends. With a token, requests need it as their bearer token, and the
// client credential "sediment:"+token+"-secret" obtains it from
// /v1/oauth/tokens.
func Start(t testing.TB, prefix, token string) *Server {
	t.Helper()
	return StartWithIO(t, prefix, token, nil)
}

// StartWithIO is Start whose server reaches table files with the
// iceberg-go IO properties io (such as s3.endpoint and credentials), as a
// REST catalog configured for its object store does.
func StartWithIO(t testing.TB, prefix, token string, io iceberg.Properties) *Server {
	t.Helper()
	props := iceberg.Properties{"warehouse": "file://" + t.TempDir()}
	for k, v := range io {
		props[k] = v
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "rest.db")+"?_pragma=busy_timeout(10000)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	backing, err := sqlcat.NewCatalog("rest", db, sqlcat.SQLite, props)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{backing: backing, token: token, secret: token + "-secret"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/oauth/tokens", s.oauthToken)
	mux.HandleFunc("GET /v1/config", s.config)
	mux.HandleFunc("POST /v1/namespaces", s.createNamespace)
	mux.HandleFunc("GET /v1/namespaces/{ns}", s.loadNamespace)
	mux.HandleFunc("HEAD /v1/namespaces/{ns}", s.loadNamespace)
	mux.HandleFunc("POST /v1/namespaces/{ns}/tables", s.createTable)
	mux.HandleFunc("GET /v1/namespaces/{ns}/tables/{tbl}", s.loadTable)
	mux.HandleFunc("HEAD /v1/namespaces/{ns}/tables/{tbl}", s.loadTable)
	mux.HandleFunc("POST /v1/namespaces/{ns}/tables/{tbl}", s.commitTable)
	srv := httptest.NewServer(http.StripPrefix("/"+prefix, s.auth(mux)))
	t.Cleanup(srv.Close)
	s.URL = srv.URL + "/" + prefix
	return s
}

func (s *Server) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		open := r.URL.Path == "/v1/oauth/tokens"
		if s.token != "" && !open && r.Header.Get("Authorization") != "Bearer "+s.token {
			writeError(w, http.StatusUnauthorized, "NotAuthorizedException", errors.New("bad or missing bearer token"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// oauthToken is the spec's client-credentials token endpoint.
func (s *Server) oauthToken(w http.ResponseWriter, r *http.Request) {
	if r.PostFormValue("grant_type") != "client_credentials" || r.PostFormValue("client_id") != "sediment" ||
		r.PostFormValue("client_secret") != s.secret {
		writeError(w, http.StatusUnauthorized, "NotAuthorizedException", errors.New("bad client credentials"))
		return
	}
	writeJSON(w, map[string]any{"access_token": s.token, "token_type": "bearer", "expires_in": 3600,
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
}

func (s *Server) config(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.warehouse = append(s.warehouse, r.URL.Query().Get("warehouse"))
	s.mu.Unlock()
	writeJSON(w, map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{},
		"endpoints": []string{
			"POST /v1/{prefix}/namespaces", "GET /v1/{prefix}/namespaces/{namespace}", "HEAD /v1/{prefix}/namespaces/{namespace}",
			"POST /v1/{prefix}/namespaces/{namespace}/tables", "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
			"HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}", "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
		}})
}

func (s *Server) createNamespace(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Namespace  table.Identifier   `json:"namespace"`
		Properties iceberg.Properties `json:"properties"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	if err := s.backing.CreateNamespace(r.Context(), req.Namespace, req.Properties); err != nil {
		writeCatalogError(w, err)
		return
	}
	writeJSON(w, req)
}

func (s *Server) loadNamespace(w http.ResponseWriter, r *http.Request) {
	ns := namespaceOf(r)
	props, err := s.backing.LoadNamespaceProperties(r.Context(), ns)
	if err != nil {
		writeCatalogError(w, err)
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, map[string]any{"namespace": ns, "properties": props})
}

func (s *Server) createTable(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name          string                 `json:"name"`
		Schema        *iceberg.Schema        `json:"schema"`
		Location      string                 `json:"location"`
		PartitionSpec *iceberg.PartitionSpec `json:"partition-spec"`
		WriteOrder    *table.SortOrder       `json:"write-order"`
		Props         iceberg.Properties     `json:"properties"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	var opts []icebergcatalog.CreateTableOpt
	if req.Location != "" {
		opts = append(opts, icebergcatalog.WithLocation(req.Location))
	}
	if req.PartitionSpec != nil {
		opts = append(opts, icebergcatalog.WithPartitionSpec(req.PartitionSpec))
	}
	if req.WriteOrder != nil {
		opts = append(opts, icebergcatalog.WithSortOrder(*req.WriteOrder))
	}
	if req.Props != nil {
		opts = append(opts, icebergcatalog.WithProperties(req.Props))
	}
	tbl, err := s.backing.CreateTable(r.Context(), append(namespaceOf(r), req.Name), req.Schema, opts...)
	if err != nil {
		writeCatalogError(w, err)
		return
	}
	writeJSON(w, map[string]any{"metadata-location": tbl.MetadataLocation(), "metadata": tbl.Metadata(), "config": map[string]string{}})
}

func (s *Server) loadTable(w http.ResponseWriter, r *http.Request) {
	tbl, err := s.backing.LoadTable(r.Context(), append(namespaceOf(r), r.PathValue("tbl")))
	if err != nil {
		writeCatalogError(w, err)
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, map[string]any{"metadata-location": tbl.MetadataLocation(), "metadata": tbl.Metadata(), "config": map[string]string{}})
}

func (s *Server) commitTable(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Requirements table.Requirements `json:"requirements"`
		Updates      table.Updates      `json:"updates"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	meta, loc, err := s.backing.CommitTable(r.Context(), append(namespaceOf(r), r.PathValue("tbl")), req.Requirements, req.Updates)
	if err != nil {
		writeCatalogError(w, err)
		return
	}
	writeJSON(w, map[string]any{"metadata-location": loc, "metadata": meta})
}

// namespaceOf is the request's namespace; the spec separates levels with
// the unit separator.
func namespaceOf(r *http.Request) table.Identifier {
	return strings.Split(r.PathValue("ns"), "\x1f")
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestException", err)
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// writeCatalogError answers err with the status and type the spec gives it.
func writeCatalogError(w http.ResponseWriter, err error) {
	switch {
	case errors.Is(err, icebergcatalog.ErrNoSuchNamespace):
		writeError(w, http.StatusNotFound, "NoSuchNamespaceException", err)
	case errors.Is(err, icebergcatalog.ErrNoSuchTable):
		writeError(w, http.StatusNotFound, "NoSuchTableException", err)
	case errors.Is(err, icebergcatalog.ErrNamespaceAlreadyExists), errors.Is(err, icebergcatalog.ErrTableAlreadyExists):
		writeError(w, http.StatusConflict, "AlreadyExistsException", err)
	case errors.Is(err, table.ErrCommitFailed):
		writeError(w, http.StatusConflict, "CommitFailedException", err)
	default:
		writeError(w, http.StatusInternalServerError, "InternalServerError", err)
	}
}

func writeError(w http.ResponseWriter, code int, typ string, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": err.Error(), "type": typ, "code": code}})
}

// Warehouses are the warehouse= values the clients asked /v1/config for.
func (s *Server) Warehouses() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.warehouse...)
}
