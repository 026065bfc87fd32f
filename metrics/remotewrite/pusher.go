package remotewrite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mcpchaos/mcpchaos/redact"
)

// Options configure a Pusher. Zero values take the defaults in brackets.
type Options struct {
	URL    string            // http(s)://HOST:PORT/PATH of the receiver; user-info is sent as basic auth
	Public bool              // allow a host that is not loopback
	Labels map[string]string // added to every series (the run's labels and id)

	QueueLen     int           // batches waiting to be sent [8]; one more is dropped
	Attempts     int           // tries per batch [4]
	Backoff      time.Duration // the wait before the second try, doubled for each next [500ms]
	Timeout      time.Duration // one request [5s]
	FlushTimeout time.Duration // how long Stop waits for the final values to be sent [15s]
	UserAgent    string        // [mcpchaos]
	Client       *http.Client  // [a client of its own that follows no redirect]
}

// Stats is what a Pusher did.
type Stats struct {
	Sent    int64  // batches the receiver accepted
	Samples int64  // samples in them
	Failed  int64  // batches given up after their tries, or refused for good (4xx)
	Dropped int64  // batches dropped because the queue was full, or not sent by the flush deadline
	LastErr string // the last failure, credentials redacted
	Final   bool   // the final values were accepted
}

// Pusher pushes gathered series to one receiver.
type Pusher struct {
	o      Options
	target *url.URL // without user-info
	shown  string   // the URL as outputs show it
	user   *url.Userinfo
	secret *redact.Set // the URL's credentials, kept out of every error text
	g      prometheus.Gatherer
	extra  []Label

	queue   chan batch
	ctx     context.Context
	cancel  context.CancelFunc
	done    chan struct{}
	qmu     sync.RWMutex // Push sends under RLock; Stop sets stopped under Lock, then closes queue
	stopped bool

	sent, samples, failed, dropped atomic.Int64
	final                          atomic.Bool
	mu                             sync.Mutex
	lastErr                        string
}

type batch struct {
	body    []byte
	samples int
	final   bool
}

// CheckURL checks a remote write URL: absolute http(s), a loopback host unless public. The
// error shows the URL redacted.
func CheckURL(raw string, public bool) (*url.URL, error) {
	u, err := redact.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	shown := redact.URL(u)
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%s: want an http:// or https:// URL with a host, e.g. http://127.0.0.1:9090/api/v1/write", shown)
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); !public && (ip == nil || !ip.IsLoopback()) && host != "localhost" {
		return nil, fmt.Errorf("%s is not on a loopback address; pass --remote-write-public to push there", shown)
	}
	return u, nil
}

// Start checks the options and gathers once (a run label that clashes with a label of the
// gathered series is an error), then pushes whenever Push is called until Stop.
func Start(g prometheus.Gatherer, o Options) (*Pusher, error) {
	u, err := CheckURL(o.URL, o.Public)
	if err != nil {
		return nil, err
	}
	defaults(&o)
	p := &Pusher{o: o, g: g, user: u.User, queue: make(chan batch, o.QueueLen), done: make(chan struct{})}
	t := *u
	t.User = nil
	p.target, p.shown = &t, redact.URL(u)
	p.secret = redact.New()
	p.secret.AddURL(u)
	for k, v := range o.Labels {
		p.extra = append(p.extra, Label{k, v})
	}
	if err := p.checkClashes(); err != nil {
		return nil, err
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	go p.send()
	return p, nil
}

func defaults(o *Options) {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.QueueLen <= 0 {
		o.QueueLen = 8
	}
	if o.Attempts <= 0 {
		o.Attempts = 4
	}
	set(&o.Backoff, 500*time.Millisecond)
	set(&o.Timeout, 5*time.Second)
	set(&o.FlushTimeout, 15*time.Second)
	if o.UserAgent == "" {
		o.UserAgent = "mcpchaos"
	}
	if o.Client == nil {
		o.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
}

// checkClashes refuses an added label that a gathered series already has: the series would
// carry one of the two values, and a dashboard would read the wrong one.
func (p *Pusher) checkClashes() error {
	mfs, err := p.g.Gather()
	if err != nil {
		return fmt.Errorf("remote write: gathering the series: %w", err)
	}
	seen := map[string]bool{"__name__": true, "le": true, "quantile": true}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				seen[lp.GetName()] = true
			}
		}
	}
	for _, l := range p.extra {
		if seen[l.Name] {
			return fmt.Errorf("remote write: the label %q is one mcpchaos sets on its series; give the run label another key", l.Name)
		}
	}
	return nil
}

// URL is the receiver's URL as outputs show it (credentials redacted).
func (p *Pusher) URL() string { return p.shown }

// Push gathers the series now and queues them; when the queue is full the batch is dropped
// and counted. It never waits for the network.
func (p *Pusher) Push(now time.Time) {
	b, err := p.gather(now, false)
	if err != nil {
		p.fail(err)
		return
	}
	p.qmu.RLock()
	defer p.qmu.RUnlock()
	if p.stopped {
		return
	}
	select {
	case p.queue <- b:
	default:
		p.dropped.Add(1)
	}
}

func (p *Pusher) gather(now time.Time, final bool) (batch, error) {
	mfs, err := p.g.Gather()
	if err != nil && len(mfs) == 0 {
		return batch{}, fmt.Errorf("gathering the series: %w", err)
	}
	series := Flatten(mfs, p.extra)
	return batch{body: snappy.Encode(nil, Marshal(series, now.UnixMilli())), samples: len(series), final: final}, nil
}

// Stop pushes the final values (gathered at now) and waits until they are sent, tried for
// good, or FlushTimeout (or ctx) ends the wait; batches still queued then are dropped.
func (p *Pusher) Stop(ctx context.Context, now time.Time) Stats {
	p.qmu.Lock()
	again := p.stopped
	p.stopped = true
	p.qmu.Unlock()
	if again {
		<-p.done
		return p.Stats()
	}
	ctx, cancel := context.WithTimeout(ctx, p.o.FlushTimeout)
	defer cancel()
	if b, err := p.gather(now, true); err != nil {
		p.fail(err)
	} else {
		select {
		case p.queue <- b:
		case <-ctx.Done():
			p.dropped.Add(1)
		}
	}
	close(p.queue)
	select {
	case <-p.done:
	case <-ctx.Done():
		p.cancel()
		<-p.done
	}
	p.cancel()
	return p.Stats()
}

// Stats reads what the pusher did so far.
func (p *Pusher) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Sent: p.sent.Load(), Samples: p.samples.Load(), Failed: p.failed.Load(), Dropped: p.dropped.Load(),
		LastErr: p.lastErr, Final: p.final.Load()}
}

func (p *Pusher) fail(err error) {
	p.mu.Lock()
	p.lastErr = p.secret.String(err.Error()) // a receiver may echo what it was sent
	p.mu.Unlock()
}

// send drains the queue, one batch at a time and in order (Prometheus refuses a sample older
// than the last of its series), until Stop closes it; a cancelled flush drops what is left.
func (p *Pusher) send() {
	defer close(p.done)
	for b := range p.queue {
		if p.ctx.Err() != nil {
			p.dropped.Add(1)
			continue
		}
		if err := p.deliver(b); err != nil {
			if p.ctx.Err() != nil {
				p.dropped.Add(1)
			} else {
				p.failed.Add(1)
			}
			p.fail(err)
			continue
		}
		p.sent.Add(1)
		p.samples.Add(int64(b.samples))
		if b.final {
			p.final.Store(true)
		}
	}
}

// deliver tries b up to Attempts times: again after a network error, a 5xx or a 429, with
// backoff doubling from Backoff; a 4xx is final (the receiver will refuse it again).
func (p *Pusher) deliver(b batch) error {
	wait := p.o.Backoff
	var err error
	for attempt := 1; ; attempt++ {
		var retry bool
		retry, err = p.post(b.body, attempt)
		if err == nil || !retry || attempt >= p.o.Attempts {
			return err
		}
		t := time.NewTimer(wait)
		select {
		case <-p.ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait *= 2
	}
}

// post sends one request; retry says whether trying again may help.
func (p *Pusher) post(body []byte, attempt int) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(p.ctx, p.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.target.String(), bytes.NewReader(body))
	if err != nil {
		return false, fmt.Errorf("remote write to %s: %v", p.shown, err)
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", p.o.UserAgent)
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	if attempt > 1 {
		req.Header.Set("Retry-Attempt", fmt.Sprint(attempt-1))
	}
	if p.user != nil {
		pw, _ := p.user.Password()
		req.SetBasicAuth(p.user.Username(), pw)
	}
	resp, err := p.o.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL is the request's: shown redacted below instead
		}
		return true, fmt.Errorf("remote write to %s: %v", p.shown, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 == 2 {
		return false, nil
	}
	err = fmt.Errorf("remote write to %s: %s: %s", p.shown, resp.Status, bytes.TrimSpace(msg))
	return resp.StatusCode/100 == 5 || resp.StatusCode == http.StatusTooManyRequests, err
}
