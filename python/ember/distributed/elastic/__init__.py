"""ember.distributed.elastic: the pieces of torch.distributed.elastic that scripts import."""
