package redisconn

import (
	"errors"
	"strings"
	"testing"

	"github.com/waitroom/waitroom/internal/registry"
)

func TestConn(t *testing.T) {
	if (Settings{}).Configured() || !(Settings{URL: "redis://x"}).Configured() || !(Settings{Cluster: []string{"a:1"}}).Configured() {
		t.Error("Configured")
	}
	c := New(Settings{URL: "redis://u:secret@127.0.0.1:1/0", PoolSize: 3}, nil)
	a, err := c.Client()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := c.Client(); a != b {
		t.Error("a second Client call made another client")
	}
	fail := c.Fail(errors.New("connection refused"))
	var se *registry.SettingError
	if !errors.As(fail, &se) || se.Key != "redis.url" || se.Value != "127.0.0.1:1" || strings.Contains(fail.Error(), "secret") {
		t.Errorf("Fail = %v", fail)
	}
	if err := c.Close(); err != nil {
		t.Error(err)
	}
	if _, err := c.Client(); err == nil {
		t.Error("Client after Close")
	}
	if err := c.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}

	bad := New(Settings{URL: "http://nope"}, nil)
	if _, err := bad.Client(); !errors.As(err, &se) || se.Key != "redis.url" || se.Value != "" {
		t.Errorf("a bad URL: %v", err)
	}
	cl := New(Settings{Cluster: []string{"10.0.0.1:6379", "10.0.0.2:6379"}}, nil)
	if _, err := cl.Client(); err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.Fail(errors.New("x")); !errors.As(err, &se) || se.Key != "redis.cluster" || se.Value != "10.0.0.1:6379,10.0.0.2:6379" {
		t.Errorf("cluster Fail = %v", err)
	}
	sc := New(Settings{Sentinel: Sentinel{Master: "m", Addresses: []string{"10.0.0.1:26379"}, Password: "secret"}}, nil)
	if !sc.Settings().Configured() {
		t.Error("Configured with Sentinels")
	}
	if _, err := sc.Client(); err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if err := sc.Fail(errors.New("x")); !errors.As(err, &se) || se.Key != "redis.sentinel" || se.Value != "m@10.0.0.1:26379" || strings.Contains(err.Error(), "secret") {
		t.Errorf("sentinel Fail = %v", err)
	}
	if err := New(Settings{}, nil).Close(); err != nil {
		t.Errorf("closing an unopened Conn: %v", err)
	}
}
