package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/cliutil"
	"github.com/lnpdb/lnpdb/cmd/lnpdb/internal/cli/root"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeCert writes a self-signed certificate for 127.0.0.1 with serial to
// dir/cert.pem and dir/key.pem, replacing them by rename, and returns it.
func writeCert(t *testing.T, dir string, serial int64) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "lnpdb test"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	for name, block := range map[string]*pem.Block{"cert.pem": {Type: "CERTIFICATE", Bytes: der}, "key.pem": {Type: "EC PRIVATE KEY", Bytes: kder}} {
		tmp := filepath.Join(dir, name+".tmp")
		require.NoError(t, os.WriteFile(tmp, pem.EncodeToMemory(block), 0o600))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, name)))
	}
	c, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return c
}

// TestServeTLSHTTP2 serves HTTPS, which speaks HTTP/2, and reloads its
// certificate on SIGHUP.
func TestServeTLSHTTP2(t *testing.T) {
	dir := t.TempDir()
	first := writeCert(t, dir, 1)
	s := startServe(t, "--addr", "127.0.0.1:0", "--tls-cert", filepath.Join(dir, "cert.pem"), "--tls-key", filepath.Join(dir, "key.pem"), "--watch", "0")
	base := s.await(t, &s.stdout, `on (https://127\.0\.0\.1:\d+)`)

	get := func(trust *x509.Certificate) (*http.Response, *x509.Certificate) {
		pool := x509.NewCertPool()
		pool.AddCert(trust)
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
		defer tr.CloseIdleConnections()
		res, err := (&http.Client{Transport: tr}).Get(base + "/api/v1/status")
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res, res.TLS.PeerCertificates[0]
	}
	res, cert := get(first)
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, 2, res.ProtoMajor, "HTTP/2 over TLS")
	assert.Equal(t, int64(1), cert.SerialNumber.Int64())

	second := writeCert(t, dir, 2)
	sighup(t)
	s.await(t, &s.stderr, `(TLS certificate reloaded)`)
	_, cert = get(second)
	assert.Equal(t, int64(2), cert.SerialNumber.Int64(), "the renewed certificate")

	// A bad pair is logged; the previous one keeps serving.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cert.pem"), []byte("junk"), 0o600))
	sighup(t)
	s.await(t, &s.stderr, `(TLS certificate not reloaded)`)
	_, cert = get(second)
	assert.Equal(t, int64(2), cert.SerialNumber.Int64())
	require.Equal(t, 0, s.stop(t))
}

func TestServeH2C(t *testing.T) {
	s := startServe(t, "--addr", "127.0.0.1:0", "--h2c")
	base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	defer tr.CloseIdleConnections()
	res, err := (&http.Client{Transport: tr}).Get(base + "/api/v1/status")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, 2, res.ProtoMajor, "HTTP/2 with prior knowledge")
	assert.NotEmpty(t, res.Header.Get("X-Request-ID"), "served through the conventions")
}

func TestServeTLSAndCORSFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--tls-cert", "x.pem"},
		{"--tls-key", "x.pem"},
		{"--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"},
		{"--cors-origin", "app.example"},
		{"--trusted-proxies", "proxy.example.net"},
	} {
		code := root.Run(t.Context(), &cliutil.Env{Stdout: io.Discard, Stderr: io.Discard}, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...))
		assert.NotEqual(t, 0, code, strings.Join(args, " "))
	}
}

// TestServeTrustedProxies: behind a trusted proxy the access log names the
// client from X-Forwarded-For; the same header from anyone else is not
// believed.
func TestServeTrustedProxies(t *testing.T) {
	for _, c := range []struct{ proxies, want string }{
		{"127.0.0.0/8", `"remote":"198.51.100.7:0"`},
		{"192.0.2.0/24", `"remote":"127.0.0.1:`},
	} {
		s := startServe(t, "--addr", "127.0.0.1:0", "--log-format", "json", "--trusted-proxies", c.proxies)
		base := s.await(t, &s.stdout, `on (http://127\.0\.0\.1:\d+)`)
		req, err := http.NewRequest(http.MethodGet, base+"/api/v1/status", nil)
		require.NoError(t, err)
		req.Header.Set("X-Forwarded-For", "6.6.6.6, 198.51.100.7")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		s.awaitCount(t, c.want, 1)
		require.Zero(t, s.stop(t))
	}
}
