"""A mixture-of-experts block with transformers' experts-implementation
switch (ET-B01): its default implementation cannot be traced, batched_mm
(gathered expert weights, one bmm) can."""

import torch


class TinyExperts(torch.nn.Module):
    def __init__(self, experts=4, dim=8):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(experts, dim, dim))
        self.impl = "grouped_mm"

    # transformers.PreTrainedModel's experts API, as the capture step calls it
    def _can_set_experts_implementation(self):
        return True

    def get_experts_implementation(self):
        return {"": self.impl}

    def set_experts_implementation(self, impl):
        self.impl = impl[""] if isinstance(impl, dict) else impl

    def forward(self, x, expert_ids):
        if self.impl != "batched_mm":
            # transformers' grouped_mm fallback loops over offs.tolist():
            # data-dependent row ranges torch.export refuses.
            raise RuntimeError(f"the {self.impl} experts implementation cannot be traced")
        return torch.bmm(x.unsqueeze(1), self.weight[expert_ids]).squeeze(1)


def tiny_experts():
    torch.manual_seed(0)
    return TinyExperts(), (torch.randn(6, 8), torch.tensor([0, 3, 1, 1, 2, 0]))
