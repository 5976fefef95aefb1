package api

import (
	_ "embed"

	"github.com/valyala/fasthttp"
)

// OpenAPI is the OpenAPI 3.1 description of this API, served at
// GET /v1/openapi.yaml without a token (it describes the contract, not
// any data).
//
//go:embed openapi.yaml
var OpenAPI []byte

func (s *Server) openAPI(ctx *fasthttp.RequestCtx, _ params) {
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.Header.SetContentType("application/yaml")
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	ctx.Response.SetBody(OpenAPI)
}
