package challenge

// Decode parses and authenticates token without checking its expiry,
// event or binding: for tests of the encoding.
func (p *PoW) Decode(token string) (Challenge, error) {
	var c Challenge
	s := p.states.Get().(*powState)
	defer p.states.Put(s)
	ev, err := p.decode(s, token, &c)
	if err != nil {
		return Challenge{}, err
	}
	c.Event = string(ev)
	return c, nil
}

// Encode seals c as Issue would, whatever its fields hold: for tests.
func (p *PoW) Encode(c Challenge) string { return p.encode(&c) }
