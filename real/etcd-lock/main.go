// etcd-lock: one fencesim-real client's lock, taken from a real etcd with
// etcd 3.4.23's own client (go.etcd.io/etcd/clientv3/concurrency, Debian
// golang-etcd-server-dev): one concurrency.Session (a lease kept alive by
// the client library) reused across acquisitions, as the model's client
// does, and a concurrency.Mutex per acquisition.
//
// Build (offline, Debian golang-go):
//
//	GOPATH=/usr/share/gocode GO111MODULE=off go build -o etcd-lock .
//
// Usage: etcd-lock -endpoints URL[,URL...] -ttl SECONDS -prefix KEY
//
// Lines on stdin (one command each) and the answers on stdout:
//
//	acquire           -> "granted <key> <header-revision> <create-revision> <lease-id>"
//	                     or "error <text>"
//	release           -> "released" or "error <text>"
//
// and, unprompted, when the session's lease is found gone (the keepalive
// loop of the library stops and closes Session.Done()):
//
//	"session-ended <lease-id>"
//
// The observer mode (-observe) watches the prefix from the start and
// prints "put <key> <create-revision>" for every creation and, for every
// deletion, "deleted <key> <create-revision> <revision>" (the lease end the
// runner records).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/clientv3"
	"go.etcd.io/etcd/clientv3/concurrency"
)

var out = bufio.NewWriter(os.Stdout)
var outMu sync.Mutex

func say(format string, a ...interface{}) {
	outMu.Lock()
	defer outMu.Unlock()
	fmt.Fprintf(out, format+"\n", a...)
	out.Flush()
}

func main() {
	endpoints := flag.String("endpoints", "", "comma-separated client URLs")
	ttl := flag.Int("ttl", 10, "session TTL in seconds")
	prefix := flag.String("prefix", "lock", "mutex prefix")
	observe := flag.Bool("observe", false, "watch the prefix and print deletions")
	timeout := flag.Duration("command-timeout", time.Second, "per-request timeout")
	flag.Parse()

	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   strings.Split(*endpoints, ","),
		DialTimeout: 5 * time.Second,
	})
	if err != nil {
		say("fatal %v", err)
		os.Exit(1)
	}
	defer cli.Close()
	pfx := *prefix + "/"

	if *observe {
		say("ready")
		created := map[string]int64{}
		// From revision 1 (a fresh cluster: nothing is compacted), so that a
		// key created before the watch reached the server is still seen; and
		// with the previous KV, whose create revision names a deleted key
		// even if its creation was missed.
		wch := cli.Watch(context.Background(), pfx, clientv3.WithPrefix(), clientv3.WithRev(1), clientv3.WithPrevKV())
		for resp := range wch {
			if err := resp.Err(); err != nil {
				say("watch-error %v", err)
				continue
			}
			for _, ev := range resp.Events {
				k := string(ev.Kv.Key)
				if ev.Type == clientv3.EventTypeDelete {
					create := created[k]
					if create == 0 && ev.PrevKv != nil {
						create = ev.PrevKv.CreateRevision
					}
					say("deleted %s %d %d", k, create, ev.Kv.ModRevision)
					delete(created, k)
				} else if ev.IsCreate() {
					created[k] = ev.Kv.CreateRevision
					say("put %s %d", k, ev.Kv.CreateRevision)
				}
			}
		}
		return
	}

	var session *concurrency.Session
	var mutex *concurrency.Mutex
	in := bufio.NewScanner(os.Stdin)
	say("ready")
	for in.Scan() {
		switch strings.TrimSpace(in.Text()) {
		case "acquire":
			if session != nil {
				select {
				case <-session.Done():
					session = nil
				default:
				}
			}
			if session == nil {
				s, err := concurrency.NewSession(cli, concurrency.WithTTL(*ttl))
				if err != nil {
					say("error session: %v", err)
					continue
				}
				session = s
				go func(s *concurrency.Session) {
					<-s.Done()
					say("session-ended %x", int64(s.Lease()))
				}(s)
			}
			mutex = concurrency.NewMutex(session, *prefix)
			// Lock waits as long as it must (the model's client waits for
			// the keys before its own), until the session ends.
			ctx, cancel := context.WithCancel(context.Background())
			go func(s *concurrency.Session) {
				select {
				case <-s.Done():
					cancel()
				case <-ctx.Done():
				}
			}(session)
			err := mutex.Lock(ctx)
			cancel()
			if err != nil {
				say("error lock: %v", err)
				continue
			}
			create := int64(0)
			gctx, gcancel := context.WithTimeout(context.Background(), *timeout)
			if r, err := cli.Get(gctx, mutex.Key()); err == nil && len(r.Kvs) == 1 {
				create = r.Kvs[0].CreateRevision
			}
			gcancel()
			say("granted %s %d %d %x", mutex.Key(), mutex.Header().Revision, create, int64(session.Lease()))
		case "release":
			if mutex == nil {
				say("released")
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), *timeout)
			err := mutex.Unlock(ctx)
			cancel()
			mutex = nil
			if err != nil {
				say("error unlock: %v", err)
				continue
			}
			say("released")
		case "quit":
			return
		}
	}
}
