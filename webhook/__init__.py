"""Flask admission webhook: AdmissionReview in, AdmissionReview out."""
