package scanner

import (
	"net/http"

	"tix/internal/ticketing"
)

// Offline is the door's offline service (temporary until door-offline lands).
type Offline interface{}

func (s *Server) admissionList(w http.ResponseWriter, r *http.Request, d *door) error {
	return ticketing.NotFound("admission list")
}

func (s *Server) batch(w http.ResponseWriter, r *http.Request, d *door) error {
	return ticketing.NotFound("batch")
}
