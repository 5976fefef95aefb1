package challenge

// Decode parses and authenticates token without checking its expiry,
// event or binding: for tests of the encoding.
func (p *PoW) Decode(token string) (Challenge, error) {
	var c Challenge
	s := p.macs.Get().(*powState)
	defer p.macs.Put(s)
	ev, err := s.decode(token, &c)
	if err != nil {
		return Challenge{}, err
	}
	c.Event = string(ev)
	return c, nil
}

// Encode signs c as Issue would, whatever its fields hold: for tests.
func (p *PoW) Encode(c Challenge) string { return p.encode(&c) }
