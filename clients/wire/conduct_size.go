package wire

// How large was an event over the cap? The conduct's line names what the server sent, so an
// event over the cap is read on, discarding and bounded, to learn its size: within a request's
// deadline (hugeEvent), at once for inspect (hugeEventLater), or in the background for a GET
// stream (sizeAfter).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// sizeRest reads on past an event over its cap, discarding, to say how large it was: up to
// the event's end, or to the first of budget bytes and the deadline. It returns the bytes read
// and whether the event's end was found. It holds no more than one buffer. A body that can be
// closed is closed at the deadline, so that a server that sends nothing more cannot hold the
// read: after an event over its cap a stream is over anyway (its parser lost its place).
func sizeRest(body io.Reader, budget int64, deadline time.Duration) (int64, bool) {
	n, ended, _ := sizeOn(body, budget, deadline)
	return n, ended
}

// sizeOn is sizeRest that also says whether the body broke off (ended, or failed) before the
// event's end, the budget and the deadline: its connection was cut short.
func sizeOn(body io.Reader, budget int64, deadline time.Duration) (n int64, ended, broke bool) {
	if c, ok := body.(io.Closer); ok {
		t := time.AfterFunc(deadline, func() { c.Close() })
		defer t.Stop()
	}
	buf := make([]byte, 32<<10)
	prevNL := false
	stop := time.Now().Add(deadline)
	for n < budget && time.Now().Before(stop) {
		k, err := body.Read(buf)
		for i := 0; i < k; i++ {
			nl := buf[i] == '\n'
			if nl && prevNL {
				return n + int64(i), true, false
			}
			if buf[i] != '\r' {
				prevNL = nl
			}
		}
		n += int64(k)
		if err != nil {
			return n, false, time.Now().Before(stop)
		}
	}
	return n, false, false
}

// hugeEvent names an event over maxEvent bytes by its size, read on (bounded, and within ctx's
// deadline) from body: "an SSE event of 64.0 MiB" when its end came, "of at least …" where the
// reading stopped. Only the first such event of c is read on; the others are cut at the cap.
func (c *Conduct) hugeEvent(ctx context.Context, err error, body io.Reader, maxEvent int, what string) error {
	var te *TooLargeError
	if !errors.As(err, &te) || body == nil {
		return err
	}
	if c != nil && (c.sized.Load() || c.attempts.Load() >= maxSizings || !c.sizing.CompareAndSwap(false, true)) {
		// Only one event of a client's conduct is read on at a time to learn its size (again
		// only when an attempt was cut short, at most maxSizings times): the line that names
		// the conduct shows one, and reading every one on made a hostile server's streams move
		// up to 64 MiB per stream and reconnect through Toxiproxy and the relays, whose copies
		// and collections held up the fault schedule (issue 20).
		c.note(HugeEvent, "%s: %s", what, te.sizeText())
		return err
	}
	wait := sizeTime // and no longer than the request may take
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, max(time.Until(dl), 0))
	}
	if c != nil {
		c.attempts.Add(1)
	}
	rest, ended, broke := sizeOn(body, sizeBudget, wait)
	size := int64(maxEvent) + rest
	te.Size, te.Ended = size, ended
	if c != nil {
		c.note(HugeEvent, "%s: %s", what, te.sizeText())
		c.learnt(what, size, ended)
		if !broke {
			c.sized.Store(true)
		}
		c.sizing.Store(false)
	}
	return err
}

// learnt rewords the conduct's line on events over the cap with a size learnt, if it is more
// than any learnt before, or the event's end was found.
func (c *Conduct) learnt(what string, size int64, ended bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if size > c.largest || ended {
		c.largest = size
		c.first[HugeEvent] = what + ": " + (&TooLargeError{Size: size, Ended: ended}).sizeText()
	}
}

// hugeEventLater is hugeEvent for a reader that must not wait (inspect's watch reports an
// event over its cap at once): the event is noted now, "at least" the cap, and its size is
// read on in a goroutine of its own, bounded as sizeRest is (and by the owner closing body),
// which rewords the note if it was the first.
func (c *Conduct) hugeEventLater(err error, body io.Reader, maxEvent int, what string) error {
	var te *TooLargeError
	if !errors.As(err, &te) || body == nil {
		return err
	}
	first := c.note(HugeEvent, "%s: %s", what, (&TooLargeError{Size: int64(maxEvent)}).sizeText())
	if first {
		go func() {
			rest, ended := sizeRest(body, sizeBudget, sizeTime)
			c.reword(HugeEvent, what+": "+(&TooLargeError{Size: int64(maxEvent) + rest, Ended: ended}).sizeText())
		}()
	}
	return err
}

// sizeAfter is hugeEvent for a GET stream, whose reader must not wait (its caller notes the
// event now, "at least" the cap): when no other attempt is under way or has succeeded, its
// size is read on in the background, bounded by sizeBudget and sizeLater (and by the stream's
// context: the run's end), rewording the note if it learnt more. It says whether it took body:
// release (which closes body) is then called by the sizer, not by the stream's owner.
// Reading past the stream's own use matters: a client that reads an event over the cap
// at a starved machine's pace learnt 1 to 10 MiB of a 64 MiB event in 2 s.
func (c *Conduct) sizeAfter(body io.Reader, release func(), maxEvent int, what string) bool {
	if c == nil || body == nil || c.sized.Load() || c.attempts.Load() >= maxSizings || !c.sizing.CompareAndSwap(false, true) {
		return false
	}
	c.attempts.Add(1)
	c.pending.Add(1)
	go func() {
		defer c.pending.Done()
		defer release()
		rest, ended, broke := sizeOn(body, sizeBudget, sizeLater)
		c.learnt(what, int64(maxEvent)+rest, ended)
		if !broke { // its end, the budget or the time bound: nothing more to learn
			c.sized.Store(true)
		}
		c.sizing.Store(false)
	}()
	return true
}

// settle waits for the sizes read on in the background, which end with the run (their streams'
// context), at most sizeSettle: the lines must say what was learnt.
func (c *Conduct) settle() {
	done := make(chan struct{})
	go func() {
		c.pending.Wait()
		close(done)
	}()
	t := time.NewTimer(sizeSettle)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}

// sizeBudget and sizeTime bound how far past its cap an event is read to learn its size;
// sizeLater bounds a GET stream's read on in the background (sizeAfter), which also ends
// with the run; sizeSettle is how long the lines wait for one to end; maxSizings bounds the
// attempts of one conduct.
const (
	sizeBudget = 64 << 20
	sizeTime   = 2 * time.Second
	sizeLater  = 30 * time.Second
	sizeSettle = 2 * time.Second
	maxSizings = 4
)

func (e *TooLargeError) sizeText() string {
	if e.Ended {
		return "an event of " + mib(e.Size)
	}
	return "an event of at least " + mib(e.Size) + " (reading stopped there)"
}

func mib(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
